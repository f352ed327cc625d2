//! Setup scripts against the real services over an in-memory store.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use roto_core::store::{Store, StoreMode};
use roto_core::value::Value;
use roto_core::{Dispatcher, Env};

use super::{Runner, SetupError};

/// A runtime and a dispatcher over the real services, started on it.
struct Harness {
    rt: tokio::runtime::Runtime,
    d: Arc<Dispatcher>,
}

impl Harness {
    fn new() -> Harness {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let store = Store::open(StoreMode::Ephemeral).expect("store");
        let env = Arc::new(Env::new(
            store,
            1000,
            "000000000000".into(),
            "us-east-1".into(),
            "localhost".into(),
        ));
        let services = roto_services::all(&env).expect("services");
        let d = {
            let _entered = rt.enter();
            Dispatcher::start(env, services)
        };
        Harness { rt, d }
    }

    fn runner(&self) -> Runner {
        Runner::new(self.d.clone(), "127.0.0.1:4566")
    }

    fn call(
        &self,
        account: &str,
        region: &str,
        service: &str,
        op: &str,
        input: Value,
    ) -> Result<Value, String> {
        let mut ctx = self.d.default_context();
        ctx.account = account.into();
        ctx.region = region.into();
        self.rt
            .block_on(self.d.call(&ctx, service, op, input))
            .map_err(|e| e.code.to_string())
    }
}

/// Runs `source` as `setup.lua` in `dir` against a fresh dispatcher.
fn run_in(dir: &Path, source: &str) -> (Harness, Result<(), SetupError>) {
    let h = Harness::new();
    let result = h.rt.block_on(h.runner().run_source(
        Path::new("setup.lua"),
        dir,
        source.as_bytes(),
    ));
    (h, result)
}

fn run(source: &str) -> (Harness, Result<(), SetupError>) {
    run_in(Path::new("."), source)
}

fn ok(source: &str) -> Harness {
    let (d, result) = run(source);
    if let Err(e) = result {
        panic!("script failed: {e}");
    }
    d
}

fn failure(source: &str) -> String {
    match run(source).1 {
        Ok(()) => panic!("script succeeded"),
        Err(e) => e.to_string(),
    }
}

fn assert_contains(haystack: &str, needles: &[&str]) {
    for needle in needles {
        assert!(haystack.contains(needle), "{haystack:?} lacks {needle:?}");
    }
}

#[test]
fn create_queue_returns_the_output_table_and_the_queue_exists() {
    let d = ok(r#"
        local q = aws.sqs.CreateQueue{QueueName = "jobs", Attributes = {VisibilityTimeout = "45"}}
        assert(q.QueueUrl == "http://127.0.0.1:4566/000000000000/jobs", q.QueueUrl)
    "#);
    let out = d.call(
        "000000000000",
        "us-east-1",
        "sqs",
        "GetQueueUrl",
        Value::map().with("QueueName", "jobs"),
    );
    assert!(out.is_ok(), "{out:?}");
}

#[test]
fn an_aws_error_names_the_script_the_line_and_the_code() {
    let message = failure("local a = 1\naws.sqs.GetQueueUrl{QueueName = \"missing\"}\n");
    assert_contains(
        &message,
        &[
            "setup script setup.lua failed",
            "setup.lua:2:",
            "aws.sqs.GetQueueUrl",
            "QueueDoesNotExist",
            "does not exist",
        ],
    );
}

#[test]
fn pcall_catches_an_aws_error_with_its_code_message_and_status() {
    ok(r#"
        local ok, e = pcall(aws.sqs.GetQueueUrl, {QueueName = "missing"})
        assert(not ok)
        assert(e.code == "QueueDoesNotExist", e.code)
        assert(e.message == "The specified queue does not exist.", e.message)
        assert(e.status == 400, e.status)
        assert(e.service == "sqs" and e.operation == "GetQueueUrl")
    "#);
}

#[test]
fn a_syntax_error_names_the_line() {
    let message = failure("local x = \nlocal = 2\n");
    assert_contains(&message, &["syntax error", "setup.lua:2:"]);
}

#[test]
fn a_runtime_error_names_the_line() {
    let message = failure("local x = 1\n\nerror(\"boom\")\n");
    assert_contains(&message, &["setup.lua:3: boom"]);
    let message = failure("local t = nil\nlocal y = t.field\n");
    assert_contains(&message, &["setup.lua:2:", "attempt to index a nil value"]);
}

#[test]
fn an_unknown_service_is_named_with_a_suggestion_and_the_dispatchers_services() {
    let (h, result) = run("\naws.sqss.CreateQueue{QueueName = \"q\"}\n");
    let names: Vec<&str> = h.d.services().iter().map(|s| s.spec().name).collect();
    let message = result.expect_err("unknown service").to_string();
    let listed = format!("(services: {})", names.join(", "));
    assert_contains(
        &message,
        &[
            "setup.lua:2:",
            "aws.sqss: no such service",
            "did you mean 'sqs'?",
            &listed,
        ],
    );
    let message = failure("aws.nothinglikeit.Go{}\n");
    assert_contains(&message, &[&format!("no such service; {listed}")]);
}

#[test]
fn an_unknown_operation_is_named_with_a_suggestion() {
    let message = failure("aws.sqs.CreateQueu{QueueName = \"q\"}\n");
    assert_contains(
        &message,
        &[
            "setup.lua:1:",
            "aws.sqs.CreateQueu: no such operation; did you mean 'CreateQueue'?",
        ],
    );
    let message = failure("aws.sqs.Frobnicate{}\n");
    assert_contains(&message, &["aws.sqs.Frobnicate: no such operation; operations are named as in the AWS API reference ("]);
}

#[test]
fn a_wrongly_typed_member_names_its_path() {
    let message = failure("\naws.sqs.CreateQueue{QueueName = true}\n");
    assert_contains(
        &message,
        &[
            "setup.lua:2:",
            "aws.sqs.CreateQueue: input.QueueName: expected a string, got the boolean true",
        ],
    );
    let message = failure(r#"aws.dynamodb.PutItem{TableName = "items", Item = {id = {S = {}}}}"#);
    assert_contains(
        &message,
        &["input.Item.id.S: expected a string, got a table"],
    );
}

#[test]
fn an_unknown_member_is_refused_with_a_suggestion() {
    let message = failure("aws.sqs.CreateQueue{QueueNam = \"q\"}\n");
    assert_contains(
        &message,
        &[
            "setup.lua:1:",
            "input: no member named 'QueueNam'; did you mean 'QueueName'?",
        ],
    );
    let message = failure("aws.sqs.CreateQueue{Zzzzzzzzzzz = \"q\"}\n");
    assert_contains(
        &message,
        &["no member named 'Zzzzzzzzzzz' (members: QueueName"],
    );
}

#[test]
fn a_list_must_be_a_sequence_and_the_input_a_table() {
    let message =
        failure(r#"aws.sqs.GetQueueAttributes{QueueUrl = "u", AttributeNames = {a = "All"}}"#);
    assert_contains(
        &message,
        &["input.AttributeNames: expected a list (a table with keys 1..n)"],
    );
    let message = failure(r#"aws.sqs.CreateQueue("jobs")"#);
    assert_contains(
        &message,
        &[
            "aws.sqs.CreateQueue: the input is a table like",
            "got the string \"jobs\"",
        ],
    );
}

#[test]
fn blobs_round_trip_as_bytes_and_timestamps_come_back_as_epoch_seconds() {
    ok(r#"
        aws.s3.CreateBucket{Bucket = "blobs"}
        local bytes = "\0\1\2\255binary"
        aws.s3.PutObject{Bucket = "blobs", Key = "k", Body = bytes}
        local o = aws.s3.GetObject{Bucket = "blobs", Key = "k"}
        assert(o.Body == bytes, "body differs")
        assert(math.type(o.LastModified) == "integer", tostring(o.LastModified))
        assert(math.abs(o.LastModified - os.time()) < 60)
    "#);
}

#[test]
fn numbers_beyond_two_to_the_53_stay_exact_as_dynamodb_numbers() {
    ok(r#"
        aws.dynamodb.CreateTable{
          TableName = "items",
          AttributeDefinitions = {{AttributeName = "id", AttributeType = "S"}},
          KeySchema = {{AttributeName = "id", KeyType = "HASH"}},
          BillingMode = "PAY_PER_REQUEST",
        }
        aws.dynamodb.PutItem{TableName = "items", Item = {
          id = {S = "a"},
          big = {N = 9007199254740993},
          text = {N = "123456789012345678901234567890"},
          nested = {M = {list = {L = {{N = "1"}, {B = "\0\1"}, {BOOL = true}}}}},
        }}
        local item = aws.dynamodb.GetItem{TableName = "items", Key = {id = {S = "a"}}}.Item
        assert(item.big.N == "9007199254740993", item.big.N)
        assert(item.text.N == "123456789012345678901234567890", item.text.N)
        local list = item.nested.M.list.L
        assert(#list == 3 and list[1].N == "1" and list[2].B == "\0\1" and list[3].BOOL == true)
    "#);
}

#[test]
fn aws_with_and_per_call_options_choose_account_and_region() {
    let d = ok(r#"
        aws.with{account = "111111111111", region = "eu-west-1"}(function()
          aws.sqs.CreateQueue{QueueName = "scoped"}
          aws.with{region = "ap-south-1"}(function()
            aws.sqs.CreateQueue{QueueName = "inner"}
          end)
        end)
        aws.sqs.CreateQueue({QueueName = "percall"}, {account = "222222222222"})
        aws.sqs.CreateQueue{QueueName = "default"}
    "#);
    let exists = |account: &str, region: &str, name: &str| {
        d.call(
            account,
            region,
            "sqs",
            "GetQueueUrl",
            Value::map().with("QueueName", name),
        )
        .is_ok()
    };
    assert!(exists("111111111111", "eu-west-1", "scoped"));
    assert!(!exists("000000000000", "us-east-1", "scoped"));
    assert!(exists("111111111111", "ap-south-1", "inner"));
    assert!(exists("222222222222", "us-east-1", "percall"));
    assert!(exists("000000000000", "us-east-1", "default"));
}

#[test]
fn aws_with_returns_the_block_results_and_restores_the_scope_after_an_error() {
    let h = ok(r#"
        local a, b = aws.with{region = "eu-west-1"}(function() return 1, 2 end)
        assert(a == 1 and b == 2)
        local ok, e = pcall(function()
          aws.with{region = "eu-west-1"}(function() error("x") end)
        end)
        assert(not ok and e:match("x$"), e)
        aws.sqs.CreateQueue{QueueName = "after"}
    "#);
    let input = Value::map().with("QueueName", "after");
    assert!(h
        .call(
            "000000000000",
            "us-east-1",
            "sqs",
            "GetQueueUrl",
            input.clone()
        )
        .is_ok());
    assert!(h
        .call("000000000000", "eu-west-1", "sqs", "GetQueueUrl", input)
        .is_err());
}

#[test]
fn bad_options_are_refused() {
    assert_contains(
        &failure(r#"aws.with{account = "123"}(function() end)"#),
        &[
            "setup.lua:1:",
            "aws.with: account must be a string of 12 digits",
        ],
    );
    assert_contains(
        &failure(r#"aws.with{zone = "x"}(function() end)"#),
        &["unknown option 'zone' (options: account, region)"],
    );
    assert_contains(
        &failure(r#"aws.sqs.ListQueues({}, {region = ""})"#),
        &["aws.sqs.ListQueues: region must be a non-empty string"],
    );
    assert_contains(
        &failure(r#"aws.with{}(42)"#),
        &["aws.with{...} takes a function"],
    );
}

#[test]
fn the_sandbox_has_no_process_file_or_module_access() {
    ok(r#"
        assert(io == nil and require == nil and package == nil and debug == nil)
        assert(dofile == nil and loadfile == nil)
        assert(os.execute == nil and os.remove == nil and os.exit == nil and os.getenv == nil)
        assert(type(os.time()) == "number")
        assert(load("return 1 + 1")() == 2)
        local f, err = load(string.dump(function() return 1 end))
        assert(f == nil and err:match("binary"), err)
    "#);
}

#[test]
fn read_file_reads_fixtures_beside_the_script_and_refuses_others() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("fixtures")).expect("mkdir");
    std::fs::write(
        dir.path().join("fixtures/item.json"),
        br#"{"id": "a", "n": [1, 2]}"#,
    )
    .expect("write");
    let (_, result) = run_in(
        dir.path(),
        r#"
        local item = roto.json.decode(roto.read_file("fixtures/item.json"))
        assert(item.id == "a" and item.n[2] == 2)
        assert(roto.read_file("fixtures/../fixtures/item.json"))
    "#,
    );
    assert_eq!(result, Ok(()));
    for (path, expected) in [
        ("../secret", "is outside the script's directory"),
        ("/etc/passwd", "is outside the script's directory"),
        ("missing.txt", "cannot read 'missing.txt'"),
    ] {
        let (_, result) = run_in(dir.path(), &format!("\nroto.read_file({path:?})"));
        let message = result.expect_err("read refused").to_string();
        assert_contains(&message, &["setup.lua:2: roto.read_file: ", expected]);
    }
}

#[test]
fn env_reads_variables_and_nil_for_unset_ones() {
    std::env::set_var("ROTO_LUA_TEST_VAR", "hello");
    ok(r#"
        assert(roto.env("ROTO_LUA_TEST_VAR") == "hello")
        assert(roto.env("ROTO_LUA_TEST_UNSET_VAR") == nil)
    "#);
    assert_contains(
        &failure("roto.env(1)"),
        &["roto.env: the name is a string, got the number 1"],
    );
}

#[test]
fn json_encodes_and_decodes() {
    ok(r#"
        local text = roto.json.encode({a = {1, 2, 3}, b = "x", c = true})
        local back = roto.json.decode(text)
        assert(back.a[3] == 3 and back.b == "x" and back.c == true)
        assert(roto.json.encode({}) == "{}")
        assert(roto.json.decode("[1, null]")[2] == roto.json.null)
        assert(roto.json.encode({x = roto.json.null}) == '{"x":null}')
    "#);
    assert_contains(
        &failure("roto.json.decode('{')"),
        &["setup.lua:1: roto.json.decode: not valid JSON"],
    );
    assert_contains(
        &failure("local t = {}; t.t = t; roto.json.encode(t)"),
        &["roto.json.encode: nested more than 128 levels"],
    );
}

#[test]
fn wait_for_yields_so_background_work_progresses() {
    let h = Harness::new();
    let background = h.d.clone();
    let result = h.rt.block_on(async {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let ctx = background.default_context();
            let _ = background
                .call(
                    &ctx,
                    "sqs",
                    "CreateQueue",
                    Value::map().with("QueueName", "late"),
                )
                .await;
        });
        h.runner()
            .run_source(
                Path::new("setup.lua"),
                Path::new("."),
                br#"
                local urls = roto.wait_for(function()
                  return aws.sqs.ListQueues{}.QueueUrls
                end, 5)
                assert(urls[1]:match("/late$"), urls[1])
                "#,
            )
            .await
    });
    assert_eq!(result, Ok(()));
}

#[test]
fn wait_for_gives_up_after_its_timeout() {
    let message = failure("\nroto.wait_for(function() return false end, 0.05)\n");
    assert_contains(
        &message,
        &["setup.lua:2: roto.wait_for: the condition was still false after 0.05 seconds"],
    );
    assert_contains(
        &failure("roto.wait_for(42)"),
        &["roto.wait_for: the first argument is a function"],
    );
}

#[test]
fn log_and_print_go_to_stderr_not_stdout() {
    ok(r#"roto.log("hello", 1, true); print("also", nil)"#);
    assert_contains(
        &failure("roto.sleep(-1)"),
        &["roto.sleep: the duration is a number of seconds"],
    );
}

#[test]
fn scripts_run_in_order_and_stop_at_the_first_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = dir.path().join("first.lua");
    let second = dir.path().join("second.lua");
    let third = dir.path().join("third.lua");
    std::fs::write(&first, r#"aws.sqs.CreateQueue{QueueName = "one"}"#).expect("write");
    std::fs::write(
        &second,
        "aws.sqs.CreateQueue{QueueName = \"one\", Attributes = {DelaySeconds = \"5\"}}",
    )
    .expect("write");
    std::fs::write(&third, r#"aws.sqs.CreateQueue{QueueName = "three"}"#).expect("write");
    let d = Harness::new();
    let result =
        d.rt.block_on(d.runner().run_files(&[first, second.clone(), third]));
    let error = result.expect_err("second fails");
    assert_eq!(error.script, second);
    assert_contains(
        &error.message,
        &["second.lua:1:", "AWS error QueueNameExists"],
    );
    assert!(d
        .call(
            "000000000000",
            "us-east-1",
            "sqs",
            "GetQueueUrl",
            Value::map().with("QueueName", "three")
        )
        .is_err());
}

#[test]
fn a_missing_script_is_reported_as_unreadable() {
    let h = Harness::new();
    let result =
        h.rt.block_on(h.runner().run_file(Path::new("/nonexistent/setup.lua")));
    let message = result.expect_err("missing").to_string();
    assert_contains(
        &message,
        &["setup script /nonexistent/setup.lua failed: cannot read it:"],
    );
}

#[test]
fn zip_builds_an_archive_lambda_accepts() {
    let h = ok(r#"
        local code = roto.zip{["app.py"] = "def handler(e, c):\n    return e\n", ["lib/util.py"] = ""}
        assert(code:sub(1, 4) == "PK\3\4")
        assert(code == roto.zip{["lib/util.py"] = "", ["app.py"] = "def handler(e, c):\n    return e\n"})
        local f = aws.lambda.CreateFunction{
          FunctionName = "zipped", Runtime = "python3.12", Handler = "app.handler",
          Role = "arn:aws:iam::000000000000:role/any", Code = {ZipFile = code},
        }
        assert(f.CodeSize == #code, f.CodeSize)
    "#);
    let f = h
        .call(
            "000000000000",
            "us-east-1",
            "lambda",
            "GetFunctionConfiguration",
            Value::map().with("FunctionName", "zipped"),
        )
        .expect("function exists");
    assert_eq!(
        f.get("Handler").and_then(Value::as_str),
        Some("app.handler")
    );
}

#[test]
fn zip_refuses_what_is_not_a_table_of_strings() {
    for (files, expected) in [
        (
            r#""app.py""#,
            "the files are a table of name = contents, got",
        ),
        ("{}", "the archive needs at least one file"),
        (
            r#"{["app.py"] = 1}"#,
            "the contents of 'app.py' are a string, got",
        ),
        (r#"{"unnamed"}"#, "the file name is a string, got"),
    ] {
        let message = failure(&format!("\nroto.zip({files})"));
        assert_contains(&message, &["setup.lua:2: roto.zip: ", expected]);
    }
}

#[test]
fn a_stack_deploys_from_setup_and_its_queue_exists() {
    let d = ok(r#"
        local body = '{"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "from-stack"}}}}'
        aws.cloudformation.CreateStack{StackName = "setup", TemplateBody = body}
        roto.wait_for(function()
          local s = aws.cloudformation.DescribeStacks{StackName = "setup"}.Stacks[1]
          return s.StackStatus == "CREATE_COMPLETE"
        end, 10)
    "#);
    let out = d.call(
        "000000000000",
        "us-east-1",
        "sqs",
        "GetQueueUrl",
        Value::map().with("QueueName", "from-stack"),
    );
    assert!(out.is_ok(), "{out:?}");
}
