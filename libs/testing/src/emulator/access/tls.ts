// A serving certificate for an emulator with authentication on: kubectl (client-go) sends bearer tokens
// only over TLS, so such an emulator serves HTTPS with a one-day self-signed certificate for 127.0.0.1,
// made by the openssl CLI (as the sandbox's private PostgreSQL does), which kubeconfigs carry as their
// certificate authority.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** PEM key and certificate (the certificate is also the CA clients trust). */
export type ServingCertificate = { readonly key: string; readonly cert: string };

/** Creates the key and certificate in `dir`. */
export async function selfSignedCertificate(dir: string): Promise<ServingCertificate> {
  const key = join(dir, 'serving.key');
  const cert = join(dir, 'serving.crt');
  await new Promise<void>((resolve, reject) =>
    execFile(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=rolepolicy-emulator',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      (error) =>
        error
          ? reject(new Error(`openssl could not make the emulator's certificate: ${error.message}`))
          : resolve(),
    ),
  );
  return { key: await readFile(key, 'utf8'), cert: await readFile(cert, 'utf8') };
}
