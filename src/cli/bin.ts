/** Process entry for `npm run dreamgym -- …` (main.ts stays importable by tests). */
import { main } from './main';

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
