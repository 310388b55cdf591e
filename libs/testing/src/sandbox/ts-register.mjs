// Registers ts-hooks.mjs: `node --import ./libs/testing/src/sandbox/ts-register.mjs some.ts` runs TypeScript
// sources as they are. Test-only: production runs the compiled dist/ with tools/register-aliases.mjs.
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
