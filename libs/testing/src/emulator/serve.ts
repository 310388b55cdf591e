// Runs the emulator as a standalone process, so a person (or the demo) can point kubectl at it:
// `node --import ./tools/register-aliases.mjs dist/libs/testing/src/emulator/serve.js --crds deploy/crds`.
import { readFileSync } from 'node:fs';
import { parseTokenFile } from './access/authn.js';
import { startEmulator } from './start.js';

function option(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

const args = process.argv.slice(2);
const port = Number(option(args, '--port') ?? '0');
const crdDir = option(args, '--crds');
// --token-auth-file <file> (kube-apiserver's format) turns on authentication and RBAC; so does --authn.
const tokenFile = option(args, '--token-auth-file');
const authentication =
  tokenFile !== undefined
    ? { tokens: parseTokenFile(readFileSync(tokenFile, 'utf8')) }
    : args.includes('--authn')
      ? {}
      : undefined;
const emu = await startEmulator({
  port,
  ...(crdDir ? { crdDir } : {}),
  ...(authentication ? { authentication } : {}),
});
// Machine-readable first lines: tests and the demo read them.
console.log(`url ${emu.url}`);
console.log(`kubeconfig ${emu.kubeconfigPath}`);
console.log(`try: KUBECONFIG=${emu.kubeconfigPath} kubectl get crds`);

const shutdown = () => {
  void emu.stop().then(() => process.exit(0));
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
