/**
 * The mini-household catalog (docs/architecture.md §3.3): receptacle and object types, the
 * ALFWorld property sets, which receptacle can hold which object (`CAN_CONTAIN`), where objects
 * usually are (`PRIORS`), and each room type's receptacle inventory with count ranges.
 *
 * Plain data only; the generator (world.ts) and the rules (commands.ts) read it.
 */

export type RoomType = 'kitchen' | 'livingroom' | 'bedroom' | 'bathroom';
export const ROOM_TYPES: readonly RoomType[] = ['kitchen', 'livingroom', 'bedroom', 'bathroom'];

// ---------------------------------------------------------------------------------------------
// Property sets (ALFWorld constants)
// ---------------------------------------------------------------------------------------------

/** Receptacles with a door; they start closed and must be open to take from / put into. */
export const OPENABLE: ReadonlySet<string> = new Set(['box', 'cabinet', 'drawer', 'fridge', 'microwave', 'safe']);
export const HEATABLE: ReadonlySet<string> = new Set([
  'apple',
  'bread',
  'cup',
  'egg',
  'mug',
  'plate',
  'potato',
  'tomato',
]);
export const COOLABLE: ReadonlySet<string> = new Set([...HEATABLE, 'bowl', 'lettuce', 'pan', 'pot', 'winebottle']);
export const CLEANABLE: ReadonlySet<string> = new Set([
  'apple',
  'bowl',
  'butterknife',
  'cloth',
  'cup',
  'dishsponge',
  'egg',
  'fork',
  'kettle',
  'knife',
  'ladle',
  'lettuce',
  'mug',
  'pan',
  'plate',
  'pot',
  'potato',
  'soapbar',
  'spatula',
  'spoon',
  'tomato',
]);
export const TOGGLEABLE: ReadonlySet<string> = new Set(['desklamp', 'floorlamp']);
/** Objects that cannot be picked up (the lamps). */
export const FIXED_OBJECTS: ReadonlySet<string> = TOGGLEABLE;

/** The appliance each state change needs (heat: microwave, cool: fridge, clean: sinkbasin). */
export const HEAT_APPLIANCE = 'microwave';
export const COOL_APPLIANCE = 'fridge';
export const CLEAN_APPLIANCE = 'sinkbasin';

/** Where lamps stand. */
export const LAMP_RECEPTACLES: readonly string[] = ['desk', 'dresser', 'sidetable'];

// ---------------------------------------------------------------------------------------------
// Object groups and the canContain table
// ---------------------------------------------------------------------------------------------

const FOOD = ['apple', 'bread', 'egg', 'lettuce', 'potato', 'tomato'];
const DISH = ['bowl', 'cup', 'mug', 'plate'];
const COOKWARE = ['kettle', 'pan', 'pot'];
const UTENSIL = ['butterknife', 'fork', 'knife', 'ladle', 'spatula', 'spoon'];
const BOTTLE = ['peppershaker', 'saltshaker', 'soapbottle', 'winebottle'];
const CLEANING = ['cloth', 'dishsponge', 'soapbar', 'spraybottle'];
const BATH_TOOL = ['plunger', 'scrubbrush'];
const LINEN = ['handtowel', 'toiletpaper', 'towel'];
const SMALL = [
  'alarmclock',
  'candle',
  'cd',
  'cellphone',
  'creditcard',
  'keychain',
  'pen',
  'pencil',
  'remotecontrol',
  'watch',
];
const MEDIA = ['book', 'laptop', 'newspaper'];
const DECOR = ['box', 'statue', 'tissuebox', 'vase'];
const SOFT = ['pillow', 'teddybear'];
const SPORT = ['baseballbat', 'basketball', 'tennisracket'];
const LAMP = ['desklamp', 'floorlamp'];
const POCKET = ['cellphone', 'creditcard', 'keychain', 'remotecontrol', 'watch'];

const canContainLists: Record<string, string[]> = {
  armchair: [...MEDIA, ...SOFT, ...POCKET, 'box'],
  bathtubbasin: [...CLEANING, 'handtowel', 'soapbottle', 'towel'],
  bed: [...MEDIA, ...SOFT, ...SPORT, 'cellphone', 'creditcard', 'keychain'],
  cabinet: [
    ...DISH,
    ...COOKWARE,
    ...BOTTLE,
    ...CLEANING,
    ...BATH_TOOL,
    ...LINEN,
    ...DECOR,
    'book',
    'candle',
    'cd',
    'creditcard',
    'keychain',
  ],
  cart: [...CLEANING, ...BATH_TOOL, ...LINEN, 'candle', 'soapbottle', 'tissuebox'],
  coffeemachine: ['cup', 'mug'],
  coffeetable: [...MEDIA, ...SMALL, ...DECOR, 'bowl', 'mug', 'plate'],
  countertop: [
    ...FOOD,
    ...DISH,
    ...COOKWARE,
    ...UTENSIL,
    ...BOTTLE,
    ...CLEANING,
    ...BATH_TOOL,
    ...LINEN,
    'book',
    'candle',
    'cellphone',
    'creditcard',
    'keychain',
    'tissuebox',
  ],
  desk: [...MEDIA, ...SMALL, ...DECOR, ...LAMP, 'baseballbat', 'bowl', 'cup', 'mug', 'tennisracket'],
  diningtable: [...FOOD, ...DISH, ...COOKWARE, ...UTENSIL, ...BOTTLE, ...MEDIA, ...SMALL, ...DECOR, 'dishsponge'],
  drawer: [...UTENSIL, ...SMALL, ...CLEANING, 'book', 'handtowel', 'peppershaker', 'saltshaker', 'toiletpaper'],
  dresser: [
    ...MEDIA,
    ...SMALL,
    ...DECOR,
    ...LAMP,
    'basketball',
    'bowl',
    'cup',
    'mug',
    'soapbottle',
    'spraybottle',
    'teddybear',
  ],
  fridge: [...FOOD, ...DISH, 'pan', 'pot', 'winebottle'],
  garbagecan: [
    ...FOOD,
    ...CLEANING,
    ...BOTTLE,
    'cd',
    'creditcard',
    'newspaper',
    'pen',
    'pencil',
    'tissuebox',
    'toiletpaper',
  ],
  handtowelholder: ['handtowel'],
  laundryhamper: ['cloth', 'handtowel', 'towel'],
  microwave: [...FOOD, ...DISH],
  ottoman: [...MEDIA, ...SOFT, ...POCKET, 'box'],
  safe: ['cd', 'cellphone', 'creditcard', 'keychain', 'statue', 'vase', 'watch'],
  shelf: [
    ...DISH,
    ...BOTTLE,
    ...CLEANING,
    ...SMALL,
    ...DECOR,
    ...BATH_TOOL,
    'book',
    'kettle',
    'teddybear',
    'toiletpaper',
    'towel',
  ],
  sidetable: [...MEDIA, ...SMALL, ...DECOR, ...LAMP, 'apple', 'bowl', 'cup', 'mug', 'plate'],
  sinkbasin: [...FOOD, ...DISH, ...COOKWARE, ...UTENSIL, 'cloth', 'dishsponge', 'soapbar'],
  sofa: [...MEDIA, ...SOFT, ...POCKET, 'box'],
  stoveburner: [...COOKWARE],
  toaster: [],
  toilet: ['candle', 'cloth', 'dishsponge', 'soapbar', 'soapbottle', 'spraybottle', 'toiletpaper'],
  toiletpaperhanger: ['toiletpaper'],
  towelholder: ['towel'],
  tvstand: [...MEDIA, ...SMALL, ...DECOR],
};

/** Receptacle type → the object types it can hold. */
export const CAN_CONTAIN: Readonly<Record<string, ReadonlySet<string>>> = Object.fromEntries(
  Object.entries(canContainLists).map(([type, objects]) => [type, new Set(objects)]),
);

export function canContain(receptacleType: string, objectType: string): boolean {
  return CAN_CONTAIN[receptacleType]?.has(objectType) ?? false;
}

// ---------------------------------------------------------------------------------------------
// Location priors: where an object type usually is (a subset of what can hold it)
// ---------------------------------------------------------------------------------------------

const FOOD_PRIOR = ['countertop', 'diningtable', 'fridge', 'garbagecan', 'sinkbasin'];
const POCKET_PRIOR = ['armchair', 'coffeetable', 'desk', 'drawer', 'dresser', 'sidetable', 'sofa'];
const DESK_PRIOR = ['desk', 'drawer', 'dresser', 'shelf', 'sidetable'];
const SHOW_PRIOR = ['coffeetable', 'desk', 'dresser', 'shelf', 'sidetable', 'tvstand'];

export const PRIORS: Readonly<Record<string, readonly string[]>> = {
  alarmclock: ['desk', 'dresser', 'shelf', 'sidetable'],
  apple: FOOD_PRIOR,
  baseballbat: ['bed', 'desk'],
  basketball: ['bed', 'dresser'],
  book: ['bed', 'coffeetable', 'desk', 'shelf', 'sidetable', 'sofa'],
  bowl: ['cabinet', 'coffeetable', 'countertop', 'diningtable', 'fridge', 'shelf', 'sidetable'],
  box: ['armchair', 'coffeetable', 'shelf', 'sidetable', 'sofa', 'tvstand'],
  bread: ['countertop', 'diningtable', 'fridge'],
  butterknife: ['countertop', 'diningtable', 'drawer', 'sinkbasin'],
  candle: ['cabinet', 'countertop', 'shelf', 'toilet', 'cart'],
  cd: DESK_PRIOR,
  cellphone: [...POCKET_PRIOR, 'bed'],
  cloth: ['bathtubbasin', 'cabinet', 'cart', 'countertop', 'drawer', 'laundryhamper', 'toilet'],
  creditcard: [...POCKET_PRIOR, 'bed'],
  cup: ['cabinet', 'countertop', 'diningtable', 'fridge', 'microwave', 'shelf', 'sinkbasin'],
  dishsponge: ['cabinet', 'countertop', 'drawer', 'sinkbasin', 'toilet', 'cart'],
  egg: FOOD_PRIOR,
  fork: ['countertop', 'diningtable', 'drawer', 'sinkbasin'],
  handtowel: ['handtowelholder', 'countertop', 'cabinet'],
  kettle: ['cabinet', 'countertop', 'shelf', 'stoveburner'],
  keychain: POCKET_PRIOR,
  knife: ['countertop', 'diningtable', 'drawer', 'sinkbasin'],
  ladle: ['countertop', 'diningtable', 'drawer', 'sinkbasin'],
  laptop: ['bed', 'coffeetable', 'desk', 'sofa', 'armchair'],
  lettuce: ['countertop', 'diningtable', 'fridge'],
  mug: ['cabinet', 'coffeemachine', 'countertop', 'desk', 'diningtable', 'shelf', 'sidetable', 'sinkbasin'],
  newspaper: ['armchair', 'coffeetable', 'diningtable', 'sidetable', 'sofa', 'tvstand'],
  pan: ['cabinet', 'countertop', 'diningtable', 'stoveburner'],
  pen: DESK_PRIOR,
  pencil: DESK_PRIOR,
  peppershaker: ['cabinet', 'countertop', 'diningtable', 'drawer', 'shelf'],
  pillow: ['armchair', 'bed', 'ottoman', 'sofa'],
  plate: ['cabinet', 'coffeetable', 'countertop', 'diningtable', 'fridge', 'shelf', 'sidetable'],
  plunger: ['cabinet', 'cart'],
  pot: ['cabinet', 'countertop', 'diningtable', 'stoveburner'],
  potato: FOOD_PRIOR,
  remotecontrol: ['armchair', 'coffeetable', 'sidetable', 'sofa', 'tvstand'],
  saltshaker: ['cabinet', 'countertop', 'diningtable', 'drawer', 'shelf'],
  scrubbrush: ['cabinet', 'cart'],
  soapbar: ['bathtubbasin', 'cabinet', 'countertop', 'sinkbasin', 'toilet'],
  soapbottle: ['cabinet', 'cart', 'countertop', 'shelf', 'toilet'],
  spatula: ['countertop', 'diningtable', 'drawer', 'sinkbasin'],
  spoon: ['countertop', 'diningtable', 'drawer', 'sinkbasin'],
  spraybottle: ['cabinet', 'cart', 'countertop', 'shelf', 'toilet'],
  statue: SHOW_PRIOR,
  teddybear: ['bed', 'dresser', 'shelf'],
  tennisracket: ['bed', 'desk'],
  tissuebox: ['coffeetable', 'countertop', 'dresser', 'shelf', 'sidetable'],
  toiletpaper: ['cabinet', 'countertop', 'shelf', 'toilet', 'toiletpaperhanger'],
  tomato: FOOD_PRIOR,
  towel: ['bathtubbasin', 'cabinet', 'laundryhamper', 'towelholder'],
  vase: SHOW_PRIOR,
  watch: POCKET_PRIOR,
  winebottle: ['cabinet', 'countertop', 'diningtable', 'fridge', 'shelf'],
};

// ---------------------------------------------------------------------------------------------
// Rooms: receptacle inventories (count ranges) and object types
// ---------------------------------------------------------------------------------------------

export interface ReceptacleSlot {
  type: string;
  /** Always at least this many. */
  min: number;
  /** At most this many. */
  max: number;
  /** Relative chance that an extra receptacle (beyond the minimums) is of this type. */
  weight: number;
}

/** Minimums sum to ≤ 5 in every room and maximums to ≥ 40, so 5–40 receptacles always fit. */
export const ROOM_RECEPTACLES: Readonly<Record<RoomType, readonly ReceptacleSlot[]>> = {
  kitchen: [
    { type: 'cabinet', min: 1, max: 13, weight: 6 },
    { type: 'coffeemachine', min: 0, max: 1, weight: 1 },
    { type: 'countertop', min: 1, max: 3, weight: 2 },
    { type: 'diningtable', min: 0, max: 1, weight: 1 },
    { type: 'drawer', min: 0, max: 13, weight: 5 },
    { type: 'fridge', min: 1, max: 1, weight: 1 },
    { type: 'garbagecan', min: 0, max: 1, weight: 1 },
    { type: 'microwave', min: 1, max: 1, weight: 1 },
    { type: 'shelf', min: 0, max: 3, weight: 1 },
    { type: 'sinkbasin', min: 1, max: 1, weight: 1 },
    { type: 'stoveburner', min: 0, max: 4, weight: 2 },
    { type: 'toaster', min: 0, max: 1, weight: 1 },
  ],
  livingroom: [
    { type: 'armchair', min: 0, max: 2, weight: 1 },
    { type: 'cabinet', min: 0, max: 8, weight: 3 },
    { type: 'coffeetable', min: 1, max: 2, weight: 1 },
    { type: 'diningtable', min: 0, max: 1, weight: 1 },
    { type: 'drawer', min: 1, max: 8, weight: 3 },
    { type: 'dresser', min: 0, max: 1, weight: 1 },
    { type: 'garbagecan', min: 0, max: 1, weight: 1 },
    { type: 'ottoman', min: 0, max: 1, weight: 1 },
    { type: 'safe', min: 0, max: 1, weight: 1 },
    { type: 'shelf', min: 0, max: 10, weight: 3 },
    { type: 'sidetable', min: 1, max: 3, weight: 1 },
    { type: 'sofa', min: 1, max: 1, weight: 1 },
    { type: 'tvstand', min: 0, max: 1, weight: 1 },
  ],
  bedroom: [
    { type: 'armchair', min: 0, max: 1, weight: 1 },
    { type: 'bed', min: 1, max: 1, weight: 1 },
    { type: 'cabinet', min: 0, max: 7, weight: 2 },
    { type: 'desk', min: 1, max: 2, weight: 1 },
    { type: 'drawer', min: 1, max: 12, weight: 5 },
    { type: 'dresser', min: 0, max: 1, weight: 1 },
    { type: 'garbagecan', min: 0, max: 1, weight: 1 },
    { type: 'laundryhamper', min: 0, max: 1, weight: 1 },
    { type: 'safe', min: 0, max: 1, weight: 1 },
    { type: 'shelf', min: 0, max: 10, weight: 3 },
    { type: 'sidetable', min: 1, max: 3, weight: 1 },
  ],
  bathroom: [
    { type: 'bathtubbasin', min: 0, max: 1, weight: 1 },
    { type: 'cabinet', min: 1, max: 10, weight: 5 },
    { type: 'cart', min: 0, max: 1, weight: 1 },
    { type: 'countertop', min: 1, max: 1, weight: 1 },
    { type: 'drawer', min: 0, max: 12, weight: 4 },
    { type: 'garbagecan', min: 0, max: 1, weight: 1 },
    { type: 'handtowelholder', min: 0, max: 2, weight: 1 },
    { type: 'shelf', min: 0, max: 6, weight: 2 },
    { type: 'sinkbasin', min: 1, max: 2, weight: 1 },
    { type: 'toilet', min: 1, max: 1, weight: 1 },
    { type: 'toiletpaperhanger', min: 0, max: 1, weight: 1 },
    { type: 'towelholder', min: 0, max: 2, weight: 1 },
  ],
};

/** Portable object types found in each room (lamps are placed separately). */
export const ROOM_OBJECTS: Readonly<Record<RoomType, readonly string[]>> = {
  kitchen: [...FOOD, ...DISH, ...COOKWARE, ...UTENSIL, ...BOTTLE, 'dishsponge'].sort(),
  livingroom: [...MEDIA, ...DECOR, ...POCKET, 'bowl', 'pillow', 'plate'].sort(),
  bedroom: [
    ...SPORT,
    ...MEDIA,
    'alarmclock',
    'bowl',
    'cd',
    'cellphone',
    'creditcard',
    'keychain',
    'mug',
    'pen',
    'pencil',
    'pillow',
    'teddybear',
    'watch',
  ].sort(),
  bathroom: [...CLEANING, ...BATH_TOOL, ...LINEN, 'candle', 'soapbottle', 'tissuebox'].sort(),
};

/** Rooms that have a lamp (a desklamp or floorlamp on a desk, sidetable or dresser). */
export const LAMP_ROOMS: ReadonlySet<RoomType> = new Set(['livingroom', 'bedroom']);
export const LAMP_TYPES: readonly string[] = LAMP;
