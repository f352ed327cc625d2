"""Roto's Python runtime: the Lambda Runtime API loop around the function's handler.

Started by Roto's process executor with the standard Lambda environment; imports
`module.function` from _HANDLER under LAMBDA_TASK_ROOT, then serves invocations one at a
time. Before posting each result it writes an end marker line, so Roto knows it has read
all of the invocation's output.

Every module it imports costs each cold start, so it imports only what the interpreter has
built in: it speaks HTTP/1.1 to the Runtime API over one kept-alive `_socket` itself
(http.client would import the email package, socket.py the enum and selectors modules, and
a host given as text the idna codec), and it reads and writes JSON with the `_json`
accelerator that the json package wraps, because the json package imports `re`, which
costs as much as the rest of a cold start. traceback is imported only when a handler fails.
Python starts with -S, because `site` runs the `.pth` files of every site-packages
directory and those can cost more than the rest of a cold start; `add_site_packages` puts
the same directories on sys.path without them.
"""

import _json
import _socket
import os
import sys
import time

END_MARKER = b"\x1eroto-end\n"
API = os.environ["AWS_LAMBDA_RUNTIME_API"]
HOST, _, PORT = API.rpartition(":")
CONNECTION = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
CONNECTION.connect((HOST.encode(), int(PORT)))
RESPONSES = open(CONNECTION.fileno(), "rb", closefd=False)


class JsonSyntax:
    """What `_json.make_scanner` reads from a decoder: the json package's defaults."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.__getitem__


SCAN = _json.make_scanner(JsonSyntax)


def json_loads(data):
    """The value of a JSON document, as json.loads gives it."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    start = len(text) - len(text.lstrip(" \t\n\r"))
    try:
        value, end = SCAN(text, start)
    except StopIteration as stop:
        raise ValueError("Expecting value: char %d" % stop.value) from None
    if text[end:].strip(" \t\n\r"):
        raise ValueError("Extra data: char %d" % end)
    return value


def runtime_version():
    _, _, version = os.environ.get("AWS_EXECUTION_ENV", "").rpartition("python")
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        return ()


# As Lambda's own Python runtime does: from python3.12 on, results keep non-ASCII text as it
# is rather than as \u escapes.
ENCODE_TEXT = _json.encode_basestring if runtime_version() >= (3, 12) else _json.encode_basestring_ascii


def unserializable(value):
    """What Lambda's runtime writes for a value json cannot: a Decimal (as DynamoDB's
    resource API returns numbers) as the number it holds; anything else is an error."""
    decimal = sys.modules.get("decimal")
    if decimal is not None and isinstance(value, decimal.Decimal):
        return float(value)
    raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)


def json_dumps(value):
    """The JSON text of `value`, with json.dumps's separators (each call marks its own
    containers, as json.dumps does, to find circular references)."""
    encode = _json.make_encoder({}, unserializable, ENCODE_TEXT, None, ": ", ", ", False, False, True)
    return "".join(encode(value, 0))


def call(method, path, body=None, headers=None):
    """One request; returns the response's headers (lower-cased names) and body."""
    body = body.encode() if isinstance(body, str) else body or b""
    lines = ["%s /2018-06-01/runtime/%s HTTP/1.1" % (method, path), "Host: " + API,
             "Content-Length: %d" % len(body)]
    lines += ["%s: %s" % item for item in (headers or {}).items()]
    CONNECTION.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    if not RESPONSES.readline():
        raise ConnectionError("the Runtime API closed the connection")
    received = {}
    for line in iter(RESPONSES.readline, b"\r\n"):
        if not line:
            raise ConnectionError("the Runtime API closed the connection")
        name, _, value = line.decode("latin-1").partition(":")
        received[name.strip().lower()] = value.strip()
    return received, RESPONSES.read(int(received.get("content-length", 0)))


def end():
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(1, END_MARKER)


def error_document(error, error_type=None, stack=True):
    import traceback

    frames = traceback.extract_tb(error.__traceback__)[1:] if stack else []
    return {
        "errorMessage": str(error),
        "errorType": error_type or type(error).__name__,
        "requestId": "",
        "stackTrace": traceback.format_list(frames),
    }


def report(document):
    lines = "".join(document["stackTrace"])
    tail = "\nTraceback (most recent call last):\n" + lines if lines else ""
    print("[ERROR] %s: %s%s" % (document["errorType"], document["errorMessage"], tail), file=sys.stderr)


class Fields:
    """An object with the named fields of a JSON object (None where absent), as Lambda's
    runtime gives `context.client_context` and `context.identity`."""

    def __init__(self, names, values):
        for name in names:
            setattr(self, name, values.get(name))


def client_context_of(document):
    if document is None:
        return None
    client_context = Fields(("custom", "env", "client"), document)
    if client_context.client is not None:
        client_context.client = Fields(("installation_id", "app_title", "app_version_name",
                                        "app_version_code", "app_package_name"), client_context.client)
    return client_context


class Context:
    def __init__(self, request_id, deadline_ms, arn, client_context):
        self.aws_request_id = request_id
        self.invoked_function_arn = arn
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION")
        self.memory_limit_in_mb = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME")
        self.client_context = client_context_of(client_context)
        self.identity = Fields(("cognito_identity_id", "cognito_identity_pool_id"), {})
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self):
        return max(0, self._deadline_ms - int(time.time() * 1000))


def init_failure(document):
    report(document)
    end()
    call("POST", "init/error", json_dumps(document), {"Lambda-Runtime-Function-Error-Type": document["errorType"]})
    sys.exit(1)


def sdk_hint(error):
    """Says, on the function's log, how to provide the AWS SDK when the function cannot import
    it: Lambda's Python runtime includes boto3, so functions import it without packaging it."""
    if (getattr(error, "name", None) or "").split(".")[0] in ("boto3", "botocore"):
        sys.stderr.write(
            "Roto: Lambda's Python runtime includes boto3, but this interpreter (%s) cannot import it; "
            "install it for that interpreter (%s -m pip install boto3), add it to the function's package, "
            "a layer or PYTHONPATH, or run functions with --lambda-executor docker\n" % (sys.executable, sys.executable))


def add_site_packages():
    """Appends the directories `site` would add: a virtual environment's site-packages,
    then the user's, then the base interpreter's (unless pyvenv.cfg excludes those two)."""
    import site
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    venv, system = [], True
    for conf in (os.path.join(exe_dir, "pyvenv.cfg"), os.path.join(os.path.dirname(exe_dir), "pyvenv.cfg")):
        if os.path.isfile(conf):
            with open(conf, encoding="utf-8") as lines:
                settings = dict((k.strip().lower(), v.strip().lower()) for k, _, v in (line.partition("=") for line in lines))
            venv = site.getsitepackages([os.path.dirname(exe_dir)])
            system = settings.get("include-system-site-packages") == "true"
            break
    user = [site.getusersitepackages()] if system and not sys.flags.no_user_site else []
    for path in venv + user + (site.getsitepackages([sys.prefix]) if system else []):
        if path not in sys.path and os.path.isdir(path):
            sys.path.append(path)


def load():
    handler = os.environ.get("_HANDLER", "")
    module_name, _, function_name = handler.rpartition(".")
    if not module_name:
        init_failure({"errorMessage": "Bad handler '%s': not enough values to unpack (expected 2, got 1)" % handler,
                      "errorType": "Runtime.MalformedHandlerName", "requestId": "", "stackTrace": []})
    sys.path.insert(0, os.environ["LAMBDA_TASK_ROOT"])
    if module_name.split(".")[0] in sys.builtin_module_names:
        init_failure({"errorMessage": "Cannot use built-in module %s as a handler module" % module_name,
                      "errorType": "Runtime.BuiltInModuleConflict", "requestId": "", "stackTrace": []})
    try:
        import_name = module_name.replace("/", ".")
        __import__(import_name)
        module = sys.modules[import_name]
    except ImportError as error:
        sdk_hint(error)
        init_failure({"errorMessage": "Unable to import module '%s': %s" % (module_name, error),
                      "errorType": "Runtime.ImportModuleError", "requestId": "", "stackTrace": []})
    except SyntaxError as error:
        init_failure({"errorMessage": "Syntax error in module '%s': %s" % (module_name, error),
                      "errorType": "Runtime.UserCodeSyntaxError", "requestId": "",
                      "stackTrace": ['  File "%s" Line %s\n    %s' % (error.filename, error.lineno, error.text)]})
    except Exception as error:  # noqa: BLE001 - the module's own failure is the function's
        init_failure(error_document(error))
    function = getattr(module, function_name, None)
    if function is None:
        init_failure({"errorMessage": "Handler '%s' missing on module '%s'" % (function_name, module_name),
                      "errorType": "Runtime.HandlerNotFound", "requestId": "", "stackTrace": []})
    return function


class RequestLog:
    """The root logger's handler in Lambda's Python runtime, which writes records to the
    function's log as `[LEVEL]\ttime\trequest id\tmessage`. Importing logging costs a good
    part of a cold start, so the handler is installed when the function's code first imports
    logging (this class is a `sys.meta_path` finder for that one module), before that code
    goes on: its `logging.basicConfig()` then finds the handler and does nothing, as in
    Lambda."""

    request_id = ""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "logging":
            return None
        sys.meta_path.remove(cls)
        for finder in sys.meta_path:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None and spec.loader is not None:
                spec.loader = cls.Loader(spec.loader)
                return spec
        return None

    class Loader:
        def __init__(self, loader):
            self.loader = loader

        def create_module(self, spec):
            return self.loader.create_module(spec)

        def exec_module(self, module):
            self.loader.exec_module(module)
            RequestLog.install(module)

    @classmethod
    def install(cls, logging):
        class RequestIdFilter(logging.Filter):
            def filter(self, record):
                record.aws_request_id = cls.request_id
                return True

        formatter = logging.Formatter("[%(levelname)s]\t%(asctime)s.%(msecs)03dZ\t%(aws_request_id)s\t%(message)s\n",
                                      "%Y-%m-%dT%H:%M:%S")
        formatter.converter = time.gmtime
        handler = logging.StreamHandler(sys.stdout)
        handler.terminator = ""
        handler.setFormatter(formatter)
        handler.addFilter(RequestIdFilter())
        logging.getLogger().addHandler(handler)


def invocation_failed(request_id, document, error_type):
    """Logs an invocation's error and posts its document, which names the request as
    Lambda's runtime does."""
    document["requestId"] = request_id
    report(document)
    end()
    call("POST", "invocation/%s/error" % request_id, json_dumps(document),
         {"Lambda-Runtime-Function-Error-Type": error_type})


def main():
    add_site_packages()
    sys.meta_path.insert(0, RequestLog)
    function = load()
    while True:
        headers, body = call("GET", "invocation/next")
        request_id = headers.get("lambda-runtime-aws-request-id")
        deadline = int(headers.get("lambda-runtime-deadline-ms") or 0)
        arn = headers.get("lambda-runtime-invoked-function-arn")
        client_context = headers.get("lambda-runtime-client-context")
        os.environ["_X_AMZN_TRACE_ID"] = headers.get("lambda-runtime-trace-id") or ""
        RequestLog.request_id = request_id or ""
        context = Context(request_id, deadline, arn, json_loads(client_context) if client_context else None)
        try:
            event = json_loads(body) if body else {}
            result = function(event, context)
        except Exception as error:  # noqa: BLE001 - the function's failure is reported
            invocation_failed(request_id, error_document(error), "Unhandled")
            continue
        try:
            payload = json_dumps(result)
        except (TypeError, ValueError) as error:
            document = error_document(error, "Runtime.MarshalError", stack=False)
            document["errorMessage"] = "Unable to marshal response: %s" % error
            invocation_failed(request_id, document, "Runtime.MarshalError")
            continue
        end()
        call("POST", "invocation/%s/response" % request_id, payload)


if __name__ == "__main__":
    main()
