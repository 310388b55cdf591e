// Maps the monorepo path aliases (@rolepolicy/<lib>) onto the compiled output in dist/ at run time.
// TypeScript resolves the same aliases from tsconfig.json "paths"; Jest from moduleNameMapper.
import { register } from 'node:module';

register('./alias-hooks.mjs', import.meta.url);
