/**
 * The authored world of mini-WebShop: five top-level categories (as in the WebShop paper:
 * fashion, beauty, electronics, furniture, food), six product types each. A type carries what
 * WebShop's scraped data carries per product — the scraping `query`, a 3-level
 * `product_category` path joined with ' › ', the nouns its titles use (the reward's type gate
 * compares title nouns), attribute phrases (the ground-truth `Attributes`), option groups with
 * value pools, and a price band. Catalog products are sampled from these (catalog.ts).
 *
 * Authoring rules, checked by the unit tests: within a type no two attribute phrases (and no
 * two values of an option group, after normalize_color) match each other under WebShop's fuzzy
 * rule (token_set_ratio > 85) or contain one another, and no noun, synonym or brand appears
 * inside an attribute phrase, so "differs in one attribute/option" really differs.
 */

export interface OptionGroupSpec {
  /** Lower-case group name as shown on the item page ('color', 'size', ...). */
  name: string;
  /** Value pool, in display order. */
  values: readonly string[];
}

export interface ProductTypeSpec {
  id: string;
  /** WebShop's scraping query (the reward's query_match compares it). */
  query: string;
  /** 3-level product_category path. */
  path: readonly [string, string, string];
  /** The noun titles use (title case in titles, lower-case in instructions). */
  noun: string;
  /** Paraphrase nouns (couch ↔ sofa), used by human-like instructions and some descriptions. */
  synonyms: readonly string[];
  attributes: readonly string[];
  options: readonly OptionGroupSpec[];
  /** Price band in dollars [lo, hi]. */
  price: readonly [number, number];
}

export interface CategorySpec {
  id: string;
  /** Short label, like WebShop's `category` field. */
  label: string;
  brands: readonly string[];
  /** Product-line names titles carry after the brand (proper nouns, like model names). */
  lines: readonly string[];
  types: readonly ProductTypeSpec[];
  /** Closing sentences for descriptions (no attribute phrases inside). */
  closings: readonly string[];
  /** Tails for bullet points: "<ATTRIBUTE> - <tail>". */
  bulletTails: readonly string[];
}

const SIZES = ['xs', 'small', 'medium', 'large', 'xl', 'xxl'] as const;
const SHOE_SIZES = ['6', '7', '8', '9', '10', '11', '12'] as const;
const ML = ['30ml', '50ml', '75ml', '100ml', '200ml'] as const;
const OUNCES = ['4oz', '8oz', '12oz', '16oz', '32oz'] as const;
const PACKS = ['single', 'twin', 'family', 'variety'] as const;

const FASHION = 'Clothing, Shoes & Jewelry';
const BEAUTY = 'Beauty & Personal Care';
const ELECTRONICS = 'Electronics';
const HOME = 'Home & Kitchen';
const GROCERY = 'Grocery & Gourmet Food';

export const CATEGORIES: readonly CategorySpec[] = [
  {
    id: 'fashion', label: 'fashion',
    brands: ['Velora', 'Tessaro', 'Brindle', 'Marlowe', 'Quillon', 'Solenne', 'Kestrel', 'Norvik'],
    lines: ['Aria', 'Solstice', 'Meridian', 'Wren', 'Cascade', 'Juniper', 'Harbor', 'Sierra', 'Ember', 'Tidal', 'Nova', 'Ravel'],
    closings: [
      'A wardrobe staple for work, weekends and everything in between.',
      'Pair it with your favorite pieces for an effortless look.',
      'Designed to keep you comfortable from morning to night.',
      'Makes a thoughtful gift for friends and family.',
    ],
    bulletTails: ['comfortable all day', 'true to size', 'easy to care for', 'made to last season after season'],
    types: [
      {
        id: 'dress', query: 'womens dresses', path: [FASHION, "Women's Clothing", 'Dresses'],
        noun: 'dress', synonyms: ['gown', 'frock'],
        attributes: ['machine wash', 'short sleeve', 'long sleeve', 'v neck', 'high waist', 'floral print',
          'stretch fabric', 'hand wash', 'polyester spandex', 'casual style', 'party wear', 'side pockets',
          'flowy hem', 'wrap style'],
        options: [
          { name: 'color', values: ['black', 'white', 'navy', 'red', 'green', 'pink', 'beige', 'burgundy'] },
          { name: 'size', values: SIZES },
          { name: 'length', values: ['mini', 'knee', 'midi', 'maxi'] },
        ],
        price: [18, 90],
      },
      {
        id: 'blouse', query: 'womens tops', path: [FASHION, "Women's Clothing", 'Tops, Tees & Blouses'],
        noun: 'blouse', synonyms: ['tunic'],
        attributes: ['button down', 'loose fit', 'chiffon fabric', 'short sleeve', 'long sleeve', 'machine wash',
          'office wear', 'ruffle trim', 'crew neck', 'lightweight', 'relaxed silhouette', 'pleated front',
          'breathable cotton'],
        options: [
          { name: 'color', values: ['white', 'black', 'pink', 'blue', 'ivory', 'lavender', 'mint', 'coral'] },
          { name: 'size', values: SIZES },
          { name: 'fit', values: ['regular', 'petite', 'plus'] },
        ],
        price: [12, 55],
      },
      {
        id: 'hoodie', query: 'mens hoodies', path: [FASHION, "Men's Clothing", 'Hoodies & Sweatshirts'],
        noun: 'hoodie', synonyms: ['sweatshirt', 'pullover'],
        attributes: ['fleece lined', 'kangaroo pocket', 'drawstring hood', 'cotton blend', 'machine wash',
          'relaxed fit', 'ribbed cuffs', 'zip up', 'heavyweight', 'brushed interior', 'long sleeve',
          'athletic cut', 'graphic print'],
        options: [
          { name: 'color', values: ['black', 'grey', 'navy', 'olive', 'burgundy', 'white', 'charcoal'] },
          { name: 'size', values: SIZES },
          { name: 'fit', values: ['regular', 'tall', 'big'] },
        ],
        price: [20, 70],
      },
      {
        id: 'sneaker', query: 'running shoes', path: [FASHION, 'Shoes', 'Athletic Shoes'],
        noun: 'sneaker', synonyms: ['trainer'],
        attributes: ['non slip', 'breathable mesh', 'memory foam', 'arch support', 'lightweight', 'rubber sole',
          'lace up', 'cushioned insole', 'wide toe box', 'shock absorbing', 'knit upper', 'gym workout'],
        options: [
          { name: 'color', values: ['black', 'white', 'grey', 'blue', 'red', 'pink'] },
          { name: 'size', values: SHOE_SIZES },
          { name: 'width', values: ['regular', 'wide'] },
        ],
        price: [35, 140],
      },
      {
        id: 'boot', query: 'womens boots', path: [FASHION, 'Shoes', 'Boots'],
        noun: 'boot', synonyms: ['bootie'],
        attributes: ['waterproof', 'faux fur lining', 'ankle height', 'block heel', 'side zipper', 'leather upper',
          'steel toe', 'slip resistant', 'knee high', 'pull on', 'lug sole', 'winter ready'],
        options: [
          { name: 'color', values: ['black', 'brown', 'tan', 'grey', 'khaki', 'burgundy'] },
          { name: 'size', values: SHOE_SIZES },
          { name: 'width', values: ['regular', 'wide'] },
        ],
        price: [45, 180],
      },
      {
        id: 'jacket', query: 'mens jackets', path: [FASHION, "Men's Clothing", 'Coats & Jackets'],
        noun: 'jacket', synonyms: ['coat', 'parka'],
        attributes: ['water resistant', 'windproof', 'hooded', 'quilted lining', 'zip pockets', 'packable',
          'insulated', 'lightweight', 'stand collar', 'fleece inner', 'reflective trim', 'outdoor hiking'],
        options: [
          { name: 'color', values: ['black', 'navy', 'olive', 'khaki', 'grey', 'red'] },
          { name: 'size', values: SIZES },
          { name: 'fit', values: ['regular', 'tall', 'big'] },
        ],
        price: [40, 200],
      },
    ],
  },
  {
    id: 'beauty', label: 'beauty',
    brands: ['Aurelle', 'Petalia', 'Lumeris', 'Dewbloom', 'Sorelle', 'Vivique', 'Calista', 'Oriel'],
    lines: ['Lumina', 'Velvetine', 'Bloomwell', 'Serenity', 'Radiance', 'Opaline', 'Halcyon', 'Petalsoft', 'Glowline', 'Purelle', 'Iris', 'Dewdrop'],
    closings: [
      'Gentle enough for everyday use.',
      'A small luxury for your daily routine.',
      'Formulated to help you look and feel your best.',
      'Loved by beauty editors and customers alike.',
    ],
    bulletTails: ['suitable for all skin types', 'dermatologist approved results', 'a little goes a long way', 'easy to apply'],
    types: [
      {
        id: 'lipstick', query: 'lipstick', path: [BEAUTY, 'Makeup', 'Lips'],
        noun: 'lipstick', synonyms: ['lipcolor'],
        attributes: ['long lasting', 'cruelty free', 'paraben free', 'moisturizing formula', 'high pigment',
          'transfer proof', 'vitamin e', 'shea butter', 'natural ingredients', 'creamy texture', 'vegan formula'],
        options: [
          { name: 'color', values: ['red', 'nude', 'pink', 'coral', 'plum', 'mauve', 'wine', 'peach'] },
          { name: 'finish', values: ['matte', 'satin', 'glossy'] },
          { name: 'pack', values: PACKS },
        ],
        price: [6, 30],
      },
      {
        id: 'mascara', query: 'mascara', path: [BEAUTY, 'Makeup', 'Eyes'],
        noun: 'mascara', synonyms: [],
        attributes: ['waterproof', 'volumizing', 'lengthening', 'clump free', 'smudge proof', 'sensitive eyes',
          'curved brush', 'ophthalmologist tested', 'long lasting', 'cruelty free', 'fiber lashes'],
        options: [
          { name: 'color', values: ['black', 'brown', 'navy', 'plum'] },
          { name: 'size', values: ['travel', 'regular', 'duo'] },
          { name: 'pack', values: PACKS },
        ],
        price: [5, 28],
      },
      {
        id: 'moisturizer', query: 'face moisturizer', path: [BEAUTY, 'Skin Care', 'Face Moisturizers'],
        noun: 'moisturizer', synonyms: ['lotion'],
        attributes: ['hyaluronic acid', 'fragrance free', 'oil free', 'dry skin', 'spf 30', 'non comedogenic',
          'anti aging', 'vitamin c', 'dermatologist tested', 'natural ingredients', 'paraben free', 'night repair'],
        options: [
          { name: 'size', values: ML },
          { name: 'scent', values: ['unscented', 'lavender', 'citrus', 'coconut', 'rose'] },
          { name: 'pack', values: PACKS },
        ],
        price: [8, 60],
      },
      {
        id: 'serum', query: 'face serum', path: [BEAUTY, 'Skin Care', 'Serums'],
        noun: 'serum', synonyms: ['essence'],
        attributes: ['vitamin c', 'hyaluronic acid', 'retinol', 'niacinamide', 'brightening', 'anti wrinkle',
          'dark spot', 'fast absorbing', 'cruelty free', 'dermatologist tested', 'oil free', 'glass dropper'],
        options: [
          { name: 'size', values: ML },
          { name: 'pack', values: PACKS },
          { name: 'scent', values: ['unscented', 'rose', 'citrus'] },
        ],
        price: [10, 70],
      },
      {
        id: 'shampoo', query: 'shampoo', path: [BEAUTY, 'Hair Care', 'Shampoos'],
        noun: 'shampoo', synonyms: [],
        attributes: ['sulfate free', 'color safe', 'dry scalp', 'curly hair', 'argan oil', 'biotin', 'volumizing',
          'dandruff control', 'natural ingredients', 'paraben free', 'fine hair', 'deep cleansing'],
        options: [
          { name: 'size', values: OUNCES },
          { name: 'scent', values: ['unscented', 'lavender', 'citrus', 'coconut', 'eucalyptus'] },
          { name: 'pack', values: PACKS },
        ],
        price: [6, 35],
      },
      {
        id: 'perfume', query: 'perfume', path: [BEAUTY, 'Fragrance', "Women's Fragrance"],
        noun: 'perfume', synonyms: ['cologne'],
        attributes: ['long lasting', 'eau de parfum', 'travel size', 'gift set', 'floral notes', 'spray bottle',
          'alcohol free', 'unisex', 'natural ingredients', 'vegan formula', 'evening wear'],
        options: [
          { name: 'size', values: ['30ml', '50ml', '100ml'] },
          { name: 'scent', values: ['floral', 'woody', 'citrus', 'vanilla', 'musk'] },
          { name: 'pack', values: ['single', 'twin'] },
        ],
        price: [20, 150],
      },
    ],
  },
  {
    id: 'electronics', label: 'electronics',
    brands: ['Voltix', 'Sonara', 'Zentrik', 'Nexor', 'Ampora', 'Kinetra', 'Quantix', 'Lumatek'],
    lines: ['Pulse', 'Vector', 'Orbit', 'Helix', 'Apex', 'Flux', 'Nimbus', 'Vertex', 'Quasar', 'Zephyr', 'Echo', 'Photon'],
    closings: [
      'Backed by a one year warranty and friendly support.',
      'Works with most phones, tablets and laptops.',
      'Setup takes just a few minutes.',
      'Everything you need is in the box.',
    ],
    bulletTails: ['works right out of the box', 'built for daily use', 'tested for reliability', 'compatible with most devices'],
    types: [
      {
        id: 'headphones', query: 'headphones', path: [ELECTRONICS, 'Headphones & Audio', 'Over-Ear Headphones'],
        noun: 'headphones', synonyms: ['earphones', 'headset'],
        attributes: ['noise cancelling', 'bluetooth 5', 'wireless', 'built in microphone', 'long battery life',
          'foldable design', 'hifi stereo', 'usb c charging', 'deep bass', 'lightweight', 'sweat resistant',
          'voice assistant'],
        options: [
          { name: 'color', values: ['black', 'white', 'silver', 'blue', 'rose gold'] },
          { name: 'style', values: ['over ear', 'in ear', 'on ear'] },
          { name: 'pack', values: ['single', 'twin'] },
        ],
        price: [20, 250],
      },
      {
        id: 'speaker', query: 'bluetooth speakers', path: [ELECTRONICS, 'Headphones & Audio', 'Portable Speakers'],
        noun: 'speaker', synonyms: ['boombox'],
        attributes: ['waterproof', 'bluetooth 5', 'portable', 'deep bass', 'long battery life', 'built in microphone',
          'stereo pairing', 'outdoor use', 'usb c charging', 'rugged design', '360 sound'],
        options: [
          { name: 'color', values: ['black', 'blue', 'red', 'grey', 'green'] },
          { name: 'pack', values: PACKS },
          { name: 'size', values: ['mini', 'midsize', 'large'] },
        ],
        price: [25, 200],
      },
      {
        id: 'charger', query: 'usb c charger', path: [ELECTRONICS, 'Accessories & Supplies', 'Chargers & Power Adapters'],
        noun: 'charger', synonyms: ['adapter'],
        attributes: ['fast charging', 'usb c', 'dual port', 'foldable plug', 'gan technology', 'overheat protection',
          'compact size', 'travel friendly', 'power delivery', 'universal compatibility', 'led indicator'],
        options: [
          { name: 'wattage', values: ['20w', '30w', '45w', '65w', '100w'] },
          { name: 'color', values: ['black', 'white'] },
          { name: 'pack', values: PACKS },
        ],
        price: [10, 60],
      },
      {
        id: 'keyboard', query: 'computer keyboards', path: [ELECTRONICS, 'Computers & Accessories', 'Keyboards'],
        noun: 'keyboard', synonyms: ['keypad'],
        attributes: ['mechanical switches', 'rgb backlit', 'wireless', 'ergonomic design', 'quiet keys',
          'usb receiver', 'rechargeable battery', 'wrist rest', 'hot swappable', 'multi device', 'spill resistant'],
        options: [
          { name: 'color', values: ['black', 'white', 'grey', 'pink'] },
          { name: 'layout', values: ['full size', 'tenkeyless', 'compact'] },
          { name: 'connection', values: ['usb cable', 'bluetooth', 'dongle'] },
        ],
        price: [20, 150],
      },
      {
        id: 'mouse', query: 'computer mouse', path: [ELECTRONICS, 'Computers & Accessories', 'Mice'],
        noun: 'mouse', synonyms: [],
        attributes: ['wireless', 'ergonomic design', 'silent click', 'rechargeable battery', 'adjustable dpi',
          'usb receiver', 'programmable buttons', 'rgb lighting', 'bluetooth 5', 'left handed', 'gaming grade'],
        options: [
          { name: 'color', values: ['black', 'white', 'grey', 'pink', 'blue'] },
          { name: 'pack', values: PACKS },
          { name: 'grip', values: ['palm', 'claw', 'fingertip'] },
        ],
        price: [10, 90],
      },
      {
        id: 'webcam', query: 'webcam', path: [ELECTRONICS, 'Computers & Accessories', 'Webcams'],
        noun: 'webcam', synonyms: ['camera'],
        attributes: ['built in microphone', 'auto focus', 'privacy cover', 'wide angle', 'low light correction',
          'usb plug', 'tripod mount', 'noise reduction', 'ring light', 'video calls'],
        options: [
          { name: 'resolution', values: ['720p', '1080p', '2k', '4k'] },
          { name: 'color', values: ['black', 'white'] },
          { name: 'pack', values: ['single', 'twin'] },
        ],
        price: [25, 150],
      },
    ],
  },
  {
    id: 'furniture', label: 'garden',
    brands: ['Hearthwood', 'Nordhaven', 'Stellan', 'Mabry', 'Lindell', 'Caskett', 'Everholt', 'Brookmere'],
    lines: ['Haven', 'Alder', 'Kensington', 'Larkspur', 'Maple', 'Ashby', 'Cypress', 'Hollis', 'Beacon', 'Thornton', 'Willow', 'Easton'],
    closings: [
      'A welcome addition to any space in your home.',
      'Ships in one box with all hardware included.',
      'Built to be enjoyed for years.',
      'Clean lines that suit modern and classic interiors.',
    ],
    bulletTails: ['sturdy and stable', 'simple to put together', 'fits most spaces', 'backed by a two year warranty'],
    types: [
      {
        id: 'sofa', query: 'sofas and couches', path: [HOME, 'Living Room Furniture', 'Sofas & Couches'],
        noun: 'sofa', synonyms: ['couch', 'settee'],
        attributes: ['wood frame', 'living room', 'easy assemble', 'velvet fabric', 'removable cushions',
          'mid century', 'sleeper function', 'high density foam', 'tufted back', 'small spaces', 'pet friendly',
          'linen upholstery', 'reclining seats'],
        options: [
          { name: 'color', values: ['grey', 'beige', 'navy', 'brown', 'green', 'black', 'white'] },
          { name: 'size', values: ['loveseat', 'three seat', 'sectional'] },
          { name: 'material', values: ['velvet', 'linen', 'leather', 'boucle'] },
        ],
        price: [180, 950],
      },
      {
        id: 'armchair', query: 'accent chairs', path: [HOME, 'Living Room Furniture', 'Accent Chairs'],
        noun: 'armchair', synonyms: ['chair'],
        attributes: ['wood frame', 'living room', 'velvet fabric', 'tufted back', 'swivel base', 'high density foam',
          'mid century', 'lumbar pillow', 'padded armrests', 'easy assemble', 'bedroom corner'],
        options: [
          { name: 'color', values: ['grey', 'beige', 'navy', 'green', 'pink', 'mustard', 'white'] },
          { name: 'pack', values: ['single', 'twin'] },
          { name: 'material', values: ['velvet', 'linen', 'leather', 'boucle'] },
        ],
        price: [90, 450],
      },
      {
        id: 'bookcase', query: 'bookcases', path: [HOME, 'Home Office Furniture', 'Bookcases'],
        noun: 'bookcase', synonyms: ['bookshelf'],
        attributes: ['engineered wood', 'metal frame', 'adjustable shelves', 'anti tip kit', 'industrial style',
          'easy assemble', 'open storage', 'living room', 'home office', 'rustic finish', 'corner fit'],
        options: [
          { name: 'color', values: ['white', 'black', 'walnut', 'espresso', 'oak'] },
          { name: 'size', values: ['3 tier', '5 tier', 'ladder'] },
          { name: 'pack', values: ['single', 'twin'] },
        ],
        price: [40, 300],
      },
      {
        id: 'desk', query: 'home office desks', path: [HOME, 'Home Office Furniture', 'Desks'],
        noun: 'desk', synonyms: ['workstation'],
        attributes: ['home office', 'metal frame', 'engineered wood', 'storage drawers', 'cable management',
          'height adjustable', 'monitor shelf', 'easy assemble', 'l shaped', 'industrial style', 'space saving'],
        options: [
          { name: 'color', values: ['white', 'black', 'walnut', 'grey', 'espresso'] },
          { name: 'size', values: ['small', 'medium', 'large'] },
          { name: 'finish', values: ['matte', 'glossy', 'textured'] },
        ],
        price: [60, 400],
      },
      {
        id: 'ottoman', query: 'ottomans', path: [HOME, 'Living Room Furniture', 'Ottomans'],
        noun: 'ottoman', synonyms: ['footstool', 'pouf'],
        attributes: ['storage space', 'velvet fabric', 'living room', 'tufted top', 'round shape', 'faux leather',
          'wood legs', 'padded seat', 'foldable design', 'easy assemble'],
        options: [
          { name: 'color', values: ['grey', 'beige', 'navy', 'brown', 'pink', 'black'] },
          { name: 'size', values: ['small', 'large'] },
          { name: 'material', values: ['velvet', 'linen', 'boucle'] },
        ],
        price: [30, 200],
      },
      {
        id: 'rug', query: 'area rugs', path: [HOME, 'Home Décor', 'Area Rugs'],
        noun: 'rug', synonyms: ['carpet'],
        attributes: ['non slip backing', 'machine washable', 'living room', 'low pile', 'shag texture',
          'stain resistant', 'boho style', 'pet friendly', 'bedroom floor', 'hand woven', 'geometric pattern'],
        options: [
          { name: 'color', values: ['grey', 'beige', 'blue', 'ivory', 'multicolor', 'navy'] },
          { name: 'size', values: ['2x3', '4x6', '5x8', '8x10', '9x12'] },
          { name: 'shape', values: ['rectangle', 'round', 'runner'] },
        ],
        price: [25, 400],
      },
    ],
  },
  {
    id: 'grocery', label: 'grocery',
    brands: ['Harvestly', 'Meadowvale', 'Sunmill', 'Bramblewood', 'Tillman', 'Fernhill', 'Wildroot', 'Kindred'],
    lines: ['Heritage', 'Sunrise', 'Golden', 'Prairie', 'Homestead', 'Orchard', 'Evergreen', 'Brookside', 'Summit', 'Riverbend', 'Hillcrest', 'Cedar'],
    closings: [
      'Perfect for busy mornings, lunch boxes and late night cravings.',
      'Made in small batches for great taste.',
      'Stock your pantry with a family favorite.',
      'Satisfaction guaranteed or your money back.',
    ],
    bulletTails: ['great taste in every bite', 'ready when you are', 'a pantry essential', 'made with care'],
    types: [
      {
        id: 'tea', query: 'tea', path: [GROCERY, 'Beverages', 'Tea'],
        noun: 'tea', synonyms: ['infusion'],
        attributes: ['caffeine free', 'organic', 'loose leaf', 'individually wrapped', 'herbal blend',
          'gluten free', 'non gmo', 'decaf', 'kosher certified', 'natural flavors', 'low calorie'],
        options: [
          { name: 'flavor', values: ['green', 'chamomile', 'earl grey', 'peppermint', 'black', 'ginger'] },
          { name: 'pack', values: PACKS },
          { name: 'form', values: ['bags', 'loose', 'pods'] },
        ],
        price: [4, 30],
      },
      {
        id: 'cookie', query: 'cookies', path: [GROCERY, 'Snack Foods', 'Cookies'],
        noun: 'cookie', synonyms: ['biscuit'],
        attributes: ['gluten free', 'individually wrapped', 'vegan', 'soft baked', 'low sugar', 'non gmo',
          'kosher certified', 'no artificial flavors', 'high protein', 'nut free', 'whole grain'],
        options: [
          { name: 'flavor', values: ['chocolate chip', 'oatmeal raisin', 'peanut butter', 'vanilla', 'lemon'] },
          { name: 'pack', values: PACKS },
          { name: 'size', values: OUNCES },
        ],
        price: [3, 25],
      },
      {
        id: 'jerky', query: 'beef jerky', path: [GROCERY, 'Snack Foods', 'Jerky & Dried Meats'],
        noun: 'jerky', synonyms: [],
        attributes: ['high protein', 'grass fed', 'gluten free', 'low sugar', 'no preservatives', 'keto friendly',
          'resealable bag', 'individually wrapped', 'low fat', 'zero carbs'],
        options: [
          { name: 'flavor', values: ['original', 'teriyaki', 'peppered', 'sweet chili', 'smoked'] },
          { name: 'size', values: OUNCES },
          { name: 'pack', values: PACKS },
        ],
        price: [6, 35],
      },
      {
        id: 'granola', query: 'granola', path: [GROCERY, 'Breakfast Foods', 'Granola'],
        noun: 'granola', synonyms: ['muesli'],
        attributes: ['gluten free', 'high fiber', 'whole grain', 'low sugar', 'non gmo', 'vegan', 'high protein',
          'organic', 'resealable bag', 'nut free'],
        options: [
          { name: 'flavor', values: ['almond crunch', 'vanilla', 'chocolate', 'mixed berry', 'cinnamon'] },
          { name: 'size', values: OUNCES },
          { name: 'pack', values: PACKS },
        ],
        price: [4, 25],
      },
      {
        id: 'pasta', query: 'pasta', path: [GROCERY, 'Pantry Staples', 'Pasta & Noodles'],
        noun: 'pasta', synonyms: ['noodles'],
        attributes: ['gluten free', 'whole wheat', 'organic', 'non gmo', 'high protein', 'vegan', 'bronze cut',
          'imported from italy', 'low carb', 'kosher certified'],
        options: [
          { name: 'shape', values: ['spaghetti', 'penne', 'fusilli', 'rigatoni', 'linguine'] },
          { name: 'pack', values: PACKS },
          { name: 'size', values: OUNCES },
        ],
        price: [3, 20],
      },
      {
        id: 'seasoning', query: 'seasoning blends', path: [GROCERY, 'Pantry Staples', 'Spices & Seasonings'],
        noun: 'seasoning', synonyms: ['spice', 'rub'],
        attributes: ['salt free', 'no msg', 'organic', 'gluten free', 'non gmo', 'keto friendly',
          'kosher certified', 'grinder top', 'low sodium', 'natural ingredients'],
        options: [
          { name: 'flavor', values: ['garlic herb', 'lemon pepper', 'smoky bbq', 'cajun', 'all purpose'] },
          { name: 'size', values: OUNCES },
          { name: 'pack', values: PACKS },
        ],
        price: [3, 20],
      },
    ],
  },
];

export interface TypeEntry {
  type: ProductTypeSpec;
  category: CategorySpec;
}

/** All product types in authored order. */
export const PRODUCT_TYPES: readonly TypeEntry[] = CATEGORIES.flatMap((category) =>
  category.types.map((type) => ({ type, category })));

const typeById = new Map(PRODUCT_TYPES.map((e) => [e.type.id, e]));

export function getTypeEntry(id: string): TypeEntry {
  const entry = typeById.get(id);
  if (!entry) throw new RangeError(`webshop: unknown product type '${id}'`);
  return entry;
}

/** WebShop's product_category string. */
export function productCategoryOf(type: ProductTypeSpec): string {
  return type.path.join(' › ');
}

/**
 * The generator's noun vocabulary, standing in for spaCy's NOUN/PROPN tags in the reward's
 * title comparison: every type noun and synonym. Brands and product lines are left out on
 * purpose (spaCy would tag them PROPN), so the type gate compares product types: a same-brand
 * product of another type does not pass it.
 */
export const NOUN_VOCABULARY: ReadonlySet<string> = new Set(
  CATEGORIES.flatMap((c) => c.types.flatMap((t) => [t.noun, ...t.synonyms])),
);

/** Every name that must stay unambiguous: nouns, synonyms, brands and product lines (lower-case). */
export const PROPER_AND_TYPE_NAMES: readonly string[] = CATEGORIES.flatMap((c) => [
  ...c.brands.map((b) => b.toLowerCase()),
  ...c.lines.map((l) => l.toLowerCase()),
  ...c.types.flatMap((t) => [t.noun, ...t.synonyms]),
]);

/** WebShop's normalize.py COLOR_SET, in its order (normalize_color returns the first substring hit). */
export const COLOR_SET: readonly string[] = [
  'alabaster', 'apricot', 'aqua', 'ash', 'asphalt', 'azure',
  'banana', 'beige', 'black', 'blue', 'blush', 'bordeaux', 'bronze',
  'brown', 'burgundy', 'camel', 'camo', 'caramel', 'champagne',
  'charcoal', 'cheetah', 'chestnut', 'chocolate', 'christmas', 'coffee',
  'cognac', 'copper', 'coral', 'cranberry', 'cream', 'crystal', 'dark',
  'denim', 'eggplant', 'elephant', 'espresso', 'fuchsia', 'gold', 'granite',
  'grape', 'graphite', 'grass', 'gray', 'green', 'grey', 'heather', 'indigo',
  'ivory', 'ivy', 'khaki', 'lavender', 'lemon', 'leopard', 'light', 'lilac',
  'lime', 'magenta', 'maroon', 'mauve', 'merlot', 'midnight', 'mint', 'mocha',
  'multicolor', 'mushroom', 'mustard', 'natural', 'navy', 'nude', 'olive',
  'orange', 'peach', 'pewter', 'pink', 'plum', 'purple', 'rainbow', 'red',
  'rose', 'royal', 'rust', 'sand', 'sapphire', 'seashell', 'silver', 'skull',
  'slate', 'steel', 'stone', 'stonewash', 'sunflower', 'tan', 'taupe', 'teal',
  'tiger', 'turquoise', 'violet', 'walnut', 'wheat', 'white', 'wine', 'yellow',
];

/** WebShop's PRICE_RANGE = range(10, 1000, 10). */
export const PRICE_RANGE: readonly number[] = Array.from({ length: 99 }, (_, i) => 10 * (i + 1));

// ---------------------------------------------------------------------------------------------
// Instruction templates (lower-case; see tasks.ts for the slots)
// ---------------------------------------------------------------------------------------------

/** WebShop's synthetic style: '<instruction> with <g>: <v>, and <g2>: <v2>, and price lower than …'. */
export const SYNTHETIC_TEMPLATES: readonly string[] = [
  'i need {atts} {noun}',
  'i am looking for {a} {noun} that is {attsAnd}',
  'i want {atts} {noun}',
  'find me {a} {noun} that is {attsAnd}',
];

/** Human-like paraphrases; {opts} is the options phrase (may be empty). */
export const HUMAN_TEMPLATES: readonly string[] = [
  "i'm looking for {a} {noun} that's {attsAnd}{opts}",
  'can you help me find {a} {atts} {noun}{opts}',
  "i'd like to buy {a} {noun} which is {attsAnd}{opts}",
  'my {relation} needs {a} {atts} {noun}{opts}',
  'please get me {a} {noun}, it should be {attsAnd}{opts}',
];

export const RELATIONS: readonly string[] = ['mom', 'dad', 'sister', 'brother', 'partner', 'roommate', 'friend'];
