/**
 * The Cloudflare Worker the workerd test bundles (esbuild) and runs: `runtimeApp` as the module
 * worker's `fetch`, made on the first request (bindings exist only then) with the `MODEL_URL`
 * binding, the model server's base URL.
 */
import { runtimeApp } from './runtime-app.js';

type Env = { MODEL_URL: string };

let app: ((request: Request) => Promise<Response>) | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    app ??= runtimeApp(env.MODEL_URL);
    return app(request);
  },
};
