// The double's control API under /_double/: faults, a second writer, the
// request log, reset and a dump of the tables.
import { readJson } from "./httpio.mjs";
import { ROUTES, WireError, stringifyFloats } from "./wire.mjs";

/** Serve one /_double/... request for `double`. */
export async function handleControl(double, req, res, url) {
  const route = `${req.method} ${url.pathname.slice("/_double".length)}`;
  try {
    switch (route) {
      case "GET /health":
        return double.sendJson(res, 200, { ok: true, port: double.port });
      case "POST /fault": {
        const body = await readJson(req);
        const specs = Array.isArray(body) ? body : [body];
        let added;
        try {
          added = specs.map((spec) => double.faults.add(spec));
        } catch (e) {
          throw new WireError(400, "BadFault", e.message);
        }
        return double.sendJson(res, 200, { added, pending: double.faults.pending });
      }
      case "GET /faults":
        return double.sendJson(res, 200, { pending: double.faults.pending });
      case "DELETE /faults":
        double.faults.clear();
        return double.sendJson(res, 200, { pending: [] });
      case "POST /run": {
        const body = await readJson(req);
        const kind = body.route ?? "mutation";
        if (!ROUTES.has(kind) || typeof body.path !== "string") {
          throw new WireError(400, "BadRun", "need {path, args, route?: query|mutation|action}");
        }
        const reply = await double.runAsOtherWriter(kind, body.path, body.args ?? {});
        return double.send(res, 200, stringifyFloats(reply), { "content-type": "application/json" });
      }
      case "GET /log":
        return double.sendJson(res, 200, { requests: double.log });
      case "DELETE /log":
        double.log = [];
        return double.sendJson(res, 200, { requests: [] });
      case "POST /reset":
        double.reset();
        return double.sendJson(res, 200, { ok: true });
      case "GET /dump":
        return double.send(res, 200, stringifyFloats(await double.dump()), { "content-type": "application/json" });
      default:
        throw new WireError(404, "NotFound", `No control route ${route}`);
    }
  } catch (e) {
    if (!(e instanceof WireError)) throw e;
    double.sendJson(res, e.status, { code: e.code, message: e.message });
  }
}
