// Roto's Node.js runtime: the Lambda Runtime API loop around the function's handler.
//
// Started by Roto's process executor with the standard Lambda environment; loads
// `module.function` from _HANDLER under LAMBDA_TASK_ROOT (CommonJS or ES modules), then
// serves invocations one at a time, for async and callback-style handlers alike. console
// output carries Lambda's `time<TAB>requestId<TAB>LEVEL<TAB>` prefix. Before posting each
// result it writes an end marker line, so Roto knows it has read all of the output.
"use strict";

const fs = require("fs");
const http = require("http");
const path = require("path");
const url = require("url");
const util = require("util");

const END_MARKER = "\u001eroto-end\n";
const [HOST, PORT] = process.env.AWS_LAMBDA_RUNTIME_API.split(":");
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let currentRequestId = "";

function call(method, p, body, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: HOST, port: PORT, method, path: "/2018-06-01/runtime/" + p, agent, headers: headers || {} },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      }
    );
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const LEVELS = [["log", "INFO"], ["info", "INFO"], ["warn", "WARN"], ["error", "ERROR"], ["debug", "DEBUG"], ["trace", "TRACE"]];
for (const [name, level] of LEVELS) {
  const stream = ["INFO", "DEBUG", "TRACE"].includes(level) ? process.stdout : process.stderr;
  console[name] = (...args) => {
    stream.write(`${new Date().toISOString()}\t${currentRequestId || "undefined"}\t${level}\t${util.format(...args)}\n`);
  };
}

function end() {
  process.stdout.write(END_MARKER);
}

function errorDocument(error) {
  if (error instanceof Error) {
    return { errorType: error.name, errorMessage: error.message, trace: String(error.stack || "").split("\n") };
  }
  return { errorType: "string", errorMessage: String(error), trace: [] };
}

async function initFailure(document) {
  console.error(`${document.errorType}: ${document.errorMessage}`);
  end();
  await call("POST", "init/error", JSON.stringify(document), { "Lambda-Runtime-Function-Error-Type": document.errorType });
  process.exit(1);
}

// Says, on the function's log, how to provide the AWS SDK for JavaScript v3 when the function
// cannot find it: Lambda's Node.js runtime includes it, so functions require it unpackaged.
function sdkHint(error) {
  if (!/Cannot find (module|package) '@aws-sdk\//.test(String(error && error.message))) return;
  const global = path.join(path.dirname(path.dirname(process.execPath)), "lib", "node_modules");
  console.error(
    `Roto: Lambda's Node.js runtime includes the AWS SDK for JavaScript v3, but this runtime cannot find it; ` +
      `install it globally (npm install -g @aws-sdk/client-s3 puts it in ${global}, on NODE_PATH), ` +
      `add it to the function's package or a layer, or run functions with --lambda-executor docker`
  );
}

async function load() {
  const handler = process.env._HANDLER || "";
  const dot = handler.lastIndexOf(".");
  if (dot < 0) {
    return initFailure({ errorType: "Runtime.MalformedHandlerName", errorMessage: "Bad handler", trace: [] });
  }
  const modulePath = handler.slice(0, dot);
  const functionName = handler.slice(dot + 1);
  const base = path.resolve(process.env.LAMBDA_TASK_ROOT, modulePath);
  const file = [".js", ".mjs", ".cjs"].map((ext) => base + ext).find((f) => fs.existsSync(f));
  if (!file) {
    return initFailure({
      errorType: "Runtime.ImportModuleError",
      errorMessage: `Error: Cannot find module '${modulePath}'`,
      trace: [],
    });
  }
  let mod;
  try {
    if (file.endsWith(".mjs")) {
      mod = await import(url.pathToFileURL(file).href);
    } else {
      try {
        mod = require(file);
      } catch (error) {
        if (error.code !== "ERR_REQUIRE_ESM") throw error;
        mod = await import(url.pathToFileURL(file).href);
      }
    }
  } catch (error) {
    // As Lambda's runtime sorts them: a syntax error, a module that cannot be found (the
    // handler's own dependencies), else the module's own exception.
    const doc = errorDocument(error);
    if (error instanceof SyntaxError) {
      return initFailure({ errorType: "Runtime.UserCodeSyntaxError", errorMessage: String(error), trace: doc.trace });
    }
    if (error && ["MODULE_NOT_FOUND", "ERR_MODULE_NOT_FOUND"].includes(error.code)) {
      sdkHint(error);
      return initFailure({ errorType: "Runtime.ImportModuleError", errorMessage: String(error), trace: doc.trace });
    }
    return initFailure(doc);
  }
  const fn = mod[functionName] || (mod.default && mod.default[functionName]);
  if (typeof fn !== "function") {
    return initFailure({
      errorType: "Runtime.HandlerNotFound",
      errorMessage: `${modulePath}.${functionName} is undefined or not exported`,
      trace: [],
    });
  }
  return fn;
}

function run(fn, event, context) {
  return new Promise((resolve, reject) => {
    const callback = (error, result) => (error ? reject(error) : resolve(result));
    try {
      const out = fn(event, context, callback);
      if (out && typeof out.then === "function") out.then(resolve, reject);
      else if (fn.length < 3) resolve(out);
    } catch (error) {
      reject(error);
    }
  });
}

async function main() {
  const fn = await load();
  for (;;) {
    const next = await call("GET", "invocation/next");
    const requestId = next.headers["lambda-runtime-aws-request-id"];
    const deadline = Number(next.headers["lambda-runtime-deadline-ms"] || 0);
    currentRequestId = requestId;
    process.env._X_AMZN_TRACE_ID = next.headers["lambda-runtime-trace-id"] || "";
    const clientContext = next.headers["lambda-runtime-client-context"];
    const context = {
      awsRequestId: requestId,
      invokedFunctionArn: next.headers["lambda-runtime-invoked-function-arn"],
      functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
      functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
      memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
      logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
      logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
      clientContext: clientContext ? JSON.parse(clientContext) : undefined,
      callbackWaitsForEmptyEventLoop: true,
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    };
    let result;
    try {
      const text = next.body.toString("utf8");
      result = await run(fn, text ? JSON.parse(text) : {}, context);
    } catch (error) {
      const doc = errorDocument(error);
      console.error(`Invoke Error \t${JSON.stringify(doc)}`);
      end();
      await call("POST", `invocation/${requestId}/error`, JSON.stringify(doc), { "Lambda-Runtime-Function-Error-Type": "Unhandled" });
      continue;
    }
    end();
    await call("POST", `invocation/${requestId}/response`, JSON.stringify(result === undefined ? null : result));
  }
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack) + "\n");
  process.exit(1);
});
