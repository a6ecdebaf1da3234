import { runAdmin } from '../ops/cli.js';
import { exitCodeOf, UsageError } from '../ops/command.js';

/** Entry point of `npm run admin`: prints the command's result as JSON. */
runAdmin(process.argv.slice(2))
  .then((result) => {
    console.log(JSON.stringify(result, null, 2));
    process.exit(exitCodeOf(result));
  })
  .catch((error) => {
    console.error(error instanceof UsageError ? error.message : `error: ${(error as Error).message}`);
    process.exit(error instanceof UsageError ? 2 : 1);
  });
