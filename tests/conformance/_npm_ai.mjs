// Loads the AI SDK (npm `ai`) from the isolated npm project envs.py builds (.conformance/npm-ai,
// or $CONVSTORE_CONFORMANCE_DIR/npm-ai). ES modules ignore NODE_PATH, so the package is
// resolved from that project's own package.json.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ENV = join(process.env.CONVSTORE_CONFORMANCE_DIR ?? join(repo, '.conformance'), 'npm-ai');
export const ai = await import(pathToFileURL(createRequire(join(ENV, 'package.json')).resolve('ai')).href);
export const REPO = repo;
