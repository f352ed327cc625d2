//! Tests: Velocity's syntax and whitespace rules, Java's methods, API Gateway's tools, the
//! service-integration and passthrough templates AWS documents, and the bounds.

use serde_json::{json, Value};

use crate::{Context, Input, Template, VtlError, MAX_DEPTH, MAX_FOREACH};

fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn try_render(template: &str, ctx: &mut Context) -> Result<String, VtlError> {
    Template::parse(template)?.render(ctx)
}

fn render_with(template: &str, ctx: &mut Context) -> String {
    try_render(template, ctx).unwrap_or_else(|e| panic!("{template}: {e}"))
}

fn render(template: &str) -> String {
    render_with(template, &mut Context::default())
}

fn body_ctx(body: &str) -> Context {
    Context::new(Input {
        body: body.to_string(),
        ..Input::default()
    })
}

#[test]
fn text_comments_and_unparsed_blocks() {
    assert_eq!(render("plain text"), "plain text");
    assert_eq!(render("a ## note\nb"), "a b");
    assert_eq!(render("a #* block\n comment *#b"), "a b");
    assert_eq!(render("#[[ $not #if ]]#"), " $not #if ");
    assert_eq!(render("50% # of $ and \\ too"), "50% # of $ and \\ too");
    assert_eq!(render("price: $5"), "price: $5");
}

#[test]
fn references_print_as_written_when_null() {
    assert_eq!(
        render("[$missing][$!missing][${missing}][$!{missing}][$missing.x.y()]"),
        "[$missing][][${missing}][][$missing.x.y()]"
    );
    assert_eq!(render("#set($a = 'v')$a ${a}s $!a $!{a}"), "v vs v v");
    assert_eq!(render("#set($m = {'k': 'v'})$m.k $m.nope"), "v $m.nope");
    assert_eq!(render("#set($a = 'v')$a."), "v.");
    assert_eq!(render("#set($a = 'v')$a.toUpperCase()"), "V");
}

#[test]
fn escaped_references() {
    assert_eq!(render("#set($a = 1)\\$a \\\\$a \\$b"), "$a \\1 \\$b");
    assert_eq!(render("\\#if(true)"), "#if(true)");
}

#[test]
fn set_and_whitespace_rules() {
    assert_eq!(render("#set($a = 1)\n$a"), "1");
    assert_eq!(render("x\n   #set($a = 1)\n$a"), "x\n   1");
    assert_eq!(render("#if(true)\n   #set($a = 1)\n#end$a"), "1");
    assert_eq!(render("## note\n\t #set($a = 1)\n$a"), "1");
    assert_eq!(render("x #set($a = 1)$a"), "x 1");
    assert_eq!(render("#if(true)\nyes\n#end\nafter"), "yes\nafter");
    assert_eq!(
        render("#if(false)\nno\n#elseif(true)\nmaybe\n#else\nyes\n#end\n"),
        "maybe\n"
    );
    assert_eq!(render("#if(false)a#{else}b#{end}c"), "bc");
    assert_eq!(render("  #if(true)\n  x\n  #end\n"), "    x\n  ");
}

#[test]
fn set_with_null_keeps_the_old_value() {
    assert_eq!(render("#set($a = 1)#set($a = $nothing)$a"), "1");
    assert_eq!(render("#set($a = 1/0)$a"), "$a");
}

#[test]
fn conditions_and_operators() {
    let cases = [
        ("#if($x)t#{else}f#end", "f"),
        ("#if('')t#{else}f#end", "t"),
        ("#if(!$x)t#end", "t"),
        ("#if(1 < 2 && 2 <= 2 and 3 > 2 && 3 >= 3)t#end", "t"),
        (
            "#if(1 == 1.0 && 'a' == 'a' && 'a' != 'b' && 1 eq 1 && 1 ne 2)t#end",
            "t",
        ),
        ("#if(false || true)t#end", "t"),
        ("#if(false or not false)t#end", "t"),
        ("#if($x == $y)t#end", "t"),
        ("#if(1 == '1')t#end", "t"),
        ("#if('b' > 'a')t#{else}f#end", "f"),
        ("#if(1 lt 2 && 2 gt 1 && 2 le 2 && 2 ge 2)t#end", "t"),
    ];
    for (template, expected) in cases {
        assert_eq!(render(template), expected, "{template}");
    }
}

#[test]
fn arithmetic_like_java() {
    assert_eq!(
        render("#set($a = 7)$a $math #set($b = $a / 2)$b #set($c = $a * 2 + 1)$c"),
        "7 $math315"
    );
    assert_eq!(render("#set($f = 7.0 / 2)$f"), "3.5");
    assert_eq!(render("#set($f = 2.5 * 4)$f"), "10.0");
    assert_eq!(render("#set($m = 7 % 3)$m,#set($n = -7 + 2)$n"), "1,-5");
    assert_eq!(render("#set($s = 'a' + 1 + 2)$s"), "a12");
    assert_eq!(render("#set($s = 'a' + $nothing)$s"), "a$nothing");
    assert_eq!(render("#set($s = (1 + 2) * 3)$s"), "9");
    assert_eq!(
        render("#set($big = 9223372036854775807 + 1)$big"),
        "9.223372036854776E18"
    );
}

#[test]
fn strings_interpolate_in_double_quotes_only() {
    assert_eq!(render("#set($n = 'x')#set($s = \"a${n}b $n\")$s"), "axb x");
    assert_eq!(render("#set($n = 'x')#set($s = 'a$n')$s"), "a$n");
    assert_eq!(render("#set($s = \"#if(true)yes#end\")$s"), "yes");
    assert_eq!(render("#set($s = \"say \"\"hi\"\"\")$s"), "say \"hi\"");
    assert_eq!(render("#set($s = \"a\\\")$s"), "a\\");
    assert_eq!(render("#set($s = '\\s+\\u00e9')$s"), "\\s+é");
    assert_eq!(render("#set($s = 'it''s')$s"), "it's");
}

#[test]
fn foreach_with_its_counters() {
    assert_eq!(
        render("#foreach($i in [1..3])$i#if($foreach.hasNext),#end#end"),
        "1,2,3"
    );
    assert_eq!(
        render("#foreach($i in ['a', 'b'])$foreach.index:$foreach.count:$velocityCount;#end"),
        "0:1:1;1:2:2;"
    );
    assert_eq!(render("#foreach($i in [3..1])$i#end"), "321");
    assert_eq!(
        render("#foreach($i in [1..5])#if($i == 3)#break#end$i#end"),
        "12"
    );
    assert_eq!(render("#foreach($v in {'a': 1, 'b': 2})$v#end"), "12");
    assert_eq!(render("#foreach($v in $nothing)x#end"), "");
    assert_eq!(
        render("#set($i = 'kept')#foreach($i in [1])$i#end$i"),
        "1kept"
    );
    assert_eq!(
        render("#foreach($a in [1, 2])#foreach($b in ['x', 'y'])$a$b#end;#end"),
        "1x1y;2x2y;"
    );
}

#[test]
fn foreach_stops_at_api_gateways_limit() {
    let out = render("#foreach($i in [1..1500])x#end");
    assert_eq!(out.len(), MAX_FOREACH);
}

#[test]
fn stop_ends_the_output() {
    assert_eq!(
        render("a#foreach($i in [1..3])$i#if($i == 2)#stop#end#end b"),
        "a12"
    );
}

#[test]
fn define_and_macros() {
    assert_eq!(
        render("#set($who = 'you')#define($greet)hello $who#end$greet, #set($who = 'me')$greet"),
        "hello you, hello me"
    );
    assert_eq!(
        render("#macro(pair $k $v)\"$k\": \"$v\"#end{#pair('a' 1), #pair('b', 2)}"),
        "{\"a\": \"1\", \"b\": \"2\"}"
    );
    assert_eq!(render("#nomacro('x') #hashtag"), "#nomacro('x') #hashtag");
    assert!(try_render("#macro(r)#r()#end#r()", &mut Context::default()).is_err());
}

#[test]
fn lists_and_maps() {
    assert_eq!(
        render("#set($l = [1, 'two', [3]])$l $l.size() $l[1] $l.get(2)"),
        "[1, two, [3]] 3 two [3]"
    );
    assert_eq!(
        render("#set($l = [])#set($ok = $l.add('a'))$l.add('b')$l $l.contains('a') $l.indexOf('b') $l.isEmpty()"),
        "true[a, b] true 1 false"
    );
    assert_eq!(
        render("#set($m = {'a': 1, \"b\": [true]})$m $m.a $m['b'] $m.get('b')"),
        "{a=1, b=[true]} 1 [true] [true]"
    );
    assert_eq!(
        render("#set($m = {})$m.put('x', 1)#set($old = $m.put('x', 2))$old $m.keySet() $m.values() $m.containsKey('x') $m.size()"),
        "$m.put('x', 1)1 [x] [2] true 1"
    );
    assert_eq!(
        render("#set($m = {'a': 1, 'b': 2})#foreach($e in $m.entrySet())$e.key=$e.getValue();#end"),
        "a=1;b=2;"
    );
    assert_eq!(
        render("#set($m = {})#set($m.x = 'y')#set($m['z'] = 1)$m"),
        "{x=y, z=1}"
    );
    assert_eq!(
        render("#set($a = [1])#set($b = $a)$b.add(2)$a"),
        "true[1, 2]"
    );
}

#[test]
fn string_methods_like_java() {
    let cases = [
        ("'Hello'", "length()", "5"),
        ("'Hello'", "substring(1)", "ello"),
        ("'Hello'", "substring(1, 3)", "el"),
        ("'Hello'", "indexOf('l')", "2"),
        ("'Hello'", "lastIndexOf('l')", "3"),
        ("'Hello'", "indexOf('z')", "-1"),
        ("'a-b-c'", "replace('-', '+')", "a+b+c"),
        ("'a1b22'", "replaceAll('[0-9]+', '#')", "a#b#"),
        (
            "'john@x'",
            "replaceAll('(\\w+)@(\\w+)', '$2 at $1')",
            "x at john",
        ),
        ("'a1b22'", "replaceFirst('[0-9]', '')", "ab22"),
        ("'a,b,,'", "split(',')", "[a, b]"),
        ("'a,b,,'", "split(',').size()", "2"),
        ("'MiXed'", "toLowerCase()", "mixed"),
        ("'MiXed'", "toUpperCase()", "MIXED"),
        ("'  pad '", "trim()", "pad"),
        ("'abc'", "startsWith('ab')", "true"),
        ("'abc'", "endsWith('bc')", "true"),
        ("'abc'", "contains('d')", "false"),
        ("'abc'", "equals('abc')", "true"),
        ("'ABC'", "equalsIgnoreCase('abc')", "true"),
        ("'2024-01-01'", "matches('\\d{4}-\\d{2}-\\d{2}')", "true"),
        ("'abc'", "matches('b')", "false"),
        ("'abc'", "isEmpty()", "false"),
        ("'abc'", "charAt(1)", "b"),
        ("'é😀'", "length()", "3"),
        ("12", "toString()", "12"),
    ];
    for (value, call, expected) in cases {
        let template = format!("#set($s = {value})#set($r = $s.{call})$r");
        assert_eq!(render(&template), expected, "{value}.{call}");
    }
    assert!(try_render("#set($s = 'abc')$s.substring(5)", &mut Context::default()).is_err());
}

#[test]
fn input_body_json_path_and_params() {
    let mut ctx = Context::new(Input {
        body:
            r#"{"name": "rex", "tags": ["a", "b"], "n": 1.5, "o": {"k": "v"}, "q": "say \"hi\""}"#
                .to_string(),
        path_params: params(&[("id", "p1"), ("both", "from-path")]),
        query_params: params(&[("both", "from-query"), ("limit", "10")]),
        headers: params(&[("Content-Type", "application/json")]),
    });
    let template = "$input.json('$.name') $input.json('$.tags') $input.json('$.o') $input.json('$.missing')|\
                    $input.path('$.name') $input.path('$.tags').size() $input.path('$.tags')[1] $input.path('$.o').k $input.path('$.n')|\
                    $input.params('id') $input.params('both') $input.params('limit') $input.params('content-type') [$input.params('none')]|\
                    $input.json('$.q')";
    assert_eq!(
        render_with(template, &mut ctx),
        "\"rex\" [\"a\",\"b\"] {\"k\":\"v\"} \"\"|rex 2 b v 1.5|p1 from-path 10 application/json []|\"say \\\"hi\\\"\""
    );
    assert_eq!(
        render_with("$input.params()", &mut ctx),
        "{path={id=p1, both=from-path}, querystring={both=from-query, limit=10}, header={Content-Type=application/json}}"
    );
    assert!(render_with("$input.body", &mut ctx).starts_with("{\"name\""));
}

#[test]
fn input_json_of_an_empty_body_is_an_empty_object() {
    assert_eq!(render_with("$input.json('$')", &mut body_ctx("")), "{}");
    assert!(try_render("$input.json('$')", &mut body_ctx("not json")).is_err());
    assert_eq!(
        render_with("$input.body", &mut body_ctx("not json")),
        "not json"
    );
}

#[test]
fn util_functions() {
    let mut ctx = Context::default();
    ctx.set("s", json!("He said \"hi\", it's a/b\\c\n\té😀"));
    assert_eq!(
        render_with("$util.escapeJavaScript($s)", &mut ctx),
        "He said \\\"hi\\\", it\\'s a\\/b\\\\c\\n\\t\\u00E9\\uD83D\\uDE00"
    );
    ctx.set("u", json!("a b&c=d/é~"));
    assert_eq!(
        render_with("$util.urlEncode($u)", &mut ctx),
        "a+b%26c%3Dd%2F%C3%A9%7E"
    );
    assert_eq!(
        render_with("$util.urlDecode('a+b%26c%3Dd%2F%C3%A9')", &mut ctx),
        "a b&c=d/é"
    );
    assert_eq!(
        render_with("$util.base64Encode('hello')", &mut ctx),
        "aGVsbG8="
    );
    assert_eq!(
        render_with("$util.base64Decode('aGVsbG8=')", &mut ctx),
        "hello"
    );
    assert_eq!(
        render_with(
            "#set($o = $util.parseJson('{\"a\": [1, {\"b\": null}]}'))$o.a[0] $o.a.size()",
            &mut ctx
        ),
        "1 2"
    );
    assert!(try_render("$util.urlDecode('%G1')", &mut ctx).is_err());
    assert_eq!(
        render_with("$util.escapeJavaScript($none)", &mut ctx),
        "$util.escapeJavaScript($none)"
    );
    assert!(try_render("$util.parseJson('{')", &mut ctx).is_err());
}

#[test]
fn context_and_stage_variables_from_the_caller() {
    let mut ctx = Context::default();
    ctx.set(
        "context",
        json!({"requestId": "r-1", "identity": {"sourceIp": "1.2.3.4"}}),
    );
    ctx.set("stageVariables", json!({"env": "dev"}));
    assert_eq!(
        render_with("$context.requestId $context.identity.sourceIp $stageVariables.env $stageVariables.none", &mut ctx),
        "r-1 1.2.3.4 dev $stageVariables.none"
    );
}

#[test]
fn overrides_are_read_back_after_rendering() {
    let mut ctx = Context::default();
    ctx.set("context", json!({"requestId": "r-1"}));
    let template = "#set($context.requestOverride.header.X-Trace = \"t-$context.requestId\")\n\
                    #set($context.requestOverride.querystring.page = 2)\n\
                    #set($context.requestOverride.path.id = 'p')\n\
                    #set($context.responseOverride.status = 418)\n\
                    #set($context.responseOverride.header.Retry-After = '5')\n\
                    body";
    assert_eq!(render_with(template, &mut ctx), "body");
    assert_eq!(
        ctx.request_override_headers(),
        params(&[("X-Trace", "t-r-1")])
    );
    assert_eq!(
        ctx.request_override_querystrings(),
        params(&[("page", "2")])
    );
    assert_eq!(ctx.request_override_paths(), params(&[("id", "p")]));
    assert_eq!(ctx.response_override_status(), Some(418));
    assert_eq!(
        ctx.response_override_headers(),
        params(&[("Retry-After", "5")])
    );
    assert_eq!(
        ctx.get("context").and_then(|c| c.get("requestId")),
        Some(&json!("r-1"))
    );
}

#[test]
fn overrides_without_a_caller_context() {
    let mut ctx = Context::default();
    render_with("#set($context.responseOverride.status = '400')", &mut ctx);
    assert_eq!(ctx.response_override_status(), Some(400));
    assert!(ctx.request_override_headers().is_empty());
}

const PASSTHROUGH: &str = r#"##  See https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-mapping-template-reference.html
##  This template will pass through all parameters including path, querystring, header, stage variables, and context through to the integration endpoint via the body/payload
#set($allParams = $input.params())
{
"body-json" : $input.json('$'),
"params" : {
#foreach($type in $allParams.keySet())
    #set($params = $allParams.get($type))
"$type" : {
    #foreach($paramName in $params.keySet())
    "$paramName" : "$util.escapeJavaScript($params.get($paramName))"
        #if($foreach.hasNext),#end
    #end
}
    #if($foreach.hasNext),#end
#end
},
"stage-variables" : {
#foreach($key in $stageVariables.keySet())
"$key" : "$util.escapeJavaScript($stageVariables.get($key))"
    #if($foreach.hasNext),#end
#end
},
"context" : {
    "account-id" : "$context.identity.accountId",
    "api-id" : "$context.apiId",
    "api-key" : "$context.identity.apiKey",
    "authorizer-principal-id" : "$context.authorizer.principalId",
    "caller" : "$context.identity.caller",
    "http-method" : "$context.httpMethod",
    "stage" : "$context.stage",
    "source-ip" : "$context.identity.sourceIp",
    "user-agent" : "$context.identity.userAgent",
    "request-id" : "$context.requestId",
    "resource-id" : "$context.resourceId",
    "resource-path" : "$context.resourcePath"
    }
}
"#;

#[test]
fn the_passthrough_template_builds_json() {
    let mut ctx = Context::new(Input {
        body: r#"{"pet": {"name": "rex"}}"#.to_string(),
        path_params: params(&[("petId", "7")]),
        query_params: params(&[("q", "a \"quoted\" value")]),
        headers: params(&[("Accept", "*/*"), ("Host", "example.com")]),
    });
    ctx.set("stageVariables", json!({"env": "dev", "tier": "1"}));
    ctx.set(
        "context",
        json!({"apiId": "abc123", "httpMethod": "POST", "stage": "prod", "requestId": "req-1",
               "resourceId": "res", "resourcePath": "/pets/{petId}", "authorizer": {"principalId": ""},
               "identity": {"accountId": "123456789012", "apiKey": "", "caller": "", "sourceIp": "10.0.0.1", "userAgent": "curl/8"}}),
    );
    let out = render_with(PASSTHROUGH, &mut ctx);
    let parsed: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}:\n{out}"));
    assert_eq!(parsed["body-json"], json!({"pet": {"name": "rex"}}));
    assert_eq!(parsed["params"]["path"], json!({"petId": "7"}));
    assert_eq!(
        parsed["params"]["querystring"],
        json!({"q": "a \"quoted\" value"})
    );
    assert_eq!(parsed["params"]["header"]["Host"], json!("example.com"));
    assert_eq!(
        parsed["stage-variables"],
        json!({"env": "dev", "tier": "1"})
    );
    assert_eq!(parsed["context"]["resource-path"], json!("/pets/{petId}"));
    assert_eq!(parsed["context"]["account-id"], json!("123456789012"));
}

#[test]
fn the_passthrough_template_with_no_stage_variables_or_body() {
    let mut ctx = Context::default();
    ctx.set("stageVariables", json!({}));
    ctx.set("context", json!({"identity": {}, "authorizer": {}}));
    let out = render_with(PASSTHROUGH, &mut ctx);
    let parsed: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}:\n{out}"));
    assert_eq!(parsed["body-json"], json!({}));
    assert_eq!(
        parsed["params"],
        json!({"path": {}, "querystring": {}, "header": {}})
    );
}

#[test]
fn sqs_send_message_template() {
    let mut ctx = body_ctx("{\"order\": \"a&b c\"}");
    assert_eq!(
        render_with(
            "Action=SendMessage&MessageBody=$util.urlEncode($input.body)",
            &mut ctx
        ),
        "Action=SendMessage&MessageBody=%7B%22order%22%3A+%22a%26b+c%22%7D"
    );
}

#[test]
fn dynamodb_put_and_query_templates() {
    let mut ctx = body_ctx(r#"{"pageId": "home", "userName": "ana", "message": "hi"}"#);
    ctx.set("context", json!({"requestId": "r-9"}));
    let put = r#"{
    "TableName": "Comments",
    "Item": {
        "commentId": {"S": "$context.requestId"},
        "pageId": {"S": "$input.path('$.pageId')"},
        "userName": {"S": "$input.path('$.userName')"},
        "message": {"S": "$input.path('$.message')"}
    }
}"#;
    let out: Value = serde_json::from_str(&render_with(put, &mut ctx)).unwrap_or_default();
    assert_eq!(out["Item"]["commentId"]["S"], json!("r-9"));
    assert_eq!(out["Item"]["message"]["S"], json!("hi"));

    let response = r#"#set($inputRoot = $input.path('$'))
{
    "comments": [
        #foreach($elem in $inputRoot.Items) {
            "commentId": "$elem.commentId.S",
            "userName": "$elem.userName.S",
            "message": "$elem.message.S"
        }#if($foreach.hasNext),#end
	#end
    ]
}"#;
    let mut ctx = body_ctx(
        r#"{"Count": 2, "Items": [
            {"commentId": {"S": "c1"}, "userName": {"S": "ana"}, "message": {"S": "one"}},
            {"commentId": {"S": "c2"}, "userName": {"S": "bo"}, "message": {"S": "two"}}]}"#,
    );
    let text = render_with(response, &mut ctx);
    let out: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    assert_eq!(
        out["comments"][1],
        json!({"commentId": "c2", "userName": "bo", "message": "two"})
    );
}

#[test]
fn kinesis_put_record_and_put_records_templates() {
    let mut ctx = Context::new(Input {
        body: r#"{"Data": "some data", "PartitionKey": "pk", "records": [{"data": "one", "partition-key": "a"}, {"data": "two", "partition-key": "b"}]}"#.to_string(),
        path_params: params(&[("stream-name", "events")]),
        ..Input::default()
    });
    let put = r#"{
    "StreamName": "$input.params('stream-name')",
    "Data": "$util.base64Encode($input.json('$.Data'))",
    "PartitionKey": "$input.path('$.PartitionKey')"
}"#;
    let out: Value = serde_json::from_str(&render_with(put, &mut ctx)).unwrap_or_default();
    assert_eq!(out["StreamName"], json!("events"));
    assert_eq!(out["Data"], json!("InNvbWUgZGF0YSI="));
    assert_eq!(out["PartitionKey"], json!("pk"));

    let put_records = r#"{
    "StreamName": "$input.params('stream-name')",
    "Records": [
       #foreach($elem in $input.path('$.records'))
          {
            "Data": "$util.base64Encode($elem.data)",
            "PartitionKey": "$elem.partition-key"
          }#if($foreach.hasNext),#end
        #end
    ]
}"#;
    let text = render_with(put_records, &mut ctx);
    let out: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    assert_eq!(
        out["Records"][1],
        json!({"Data": "dHdv", "PartitionKey": "b"})
    );
}

#[test]
fn parse_errors_say_where() {
    for template in [
        "#if(true)never closed",
        "#end",
        "#set($a = )",
        "#set(nothing)",
        "#foreach($i [1])#end",
        "#* unterminated",
        "#set($a = \"unterminated)",
        "#if(true)#else#else#end",
    ] {
        let error = Template::parse(template).expect_err(template);
        assert!(error.message.contains("line 1"), "{template}: {error}");
    }
}

#[test]
fn parse_and_render_are_bounded() {
    let deep_ifs = "#if(true)".repeat(MAX_DEPTH + 1) + &"#end".repeat(MAX_DEPTH + 1);
    assert!(Template::parse(&deep_ifs).is_err());
    let deep_parens =
        "#set($a = ".to_string() + &"(".repeat(100_000) + "1" + &")".repeat(100_000) + ")";
    assert!(Template::parse(&deep_parens).is_err());
    let nots = "#if(".to_string() + &"!".repeat(100_000) + "true)#end";
    assert!(Template::parse(&nots).is_err());
    let sums = "#set($a = 1".to_string() + &" + 1".repeat(100_000) + ")";
    assert!(Template::parse(&sums).is_err());
    let doubling = "#set($s = 'xxxxxxxxxxxxxxxx')#foreach($i in [1..40])#set($s = \"$s$s\")#end$s";
    assert!(try_render(doubling, &mut Context::default()).is_err());
    let nested_loops =
        "#foreach($a in [1..1000])#foreach($b in [1..1000])#foreach($c in [1..1000])x#end#end#end";
    assert!(try_render(nested_loops, &mut Context::default()).is_err());
    let growing = "#set($l = [1])#foreach($i in [1..60])#set($ok = $l.addAll($l))#end";
    assert!(try_render(growing, &mut Context::default()).is_err());
    let cycle = "#set($l = [])#set($ok = $l.add($l))$l";
    assert!(render(cycle).starts_with("[[[["));
    let recursion = "#macro(m $n)#m($n)#end#m(1)";
    assert!(try_render(recursion, &mut Context::default()).is_err());
}

#[test]
fn templates_and_contexts_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Template>();
    shareable::<Context>();
    shareable::<VtlError>();
}

#[test]
fn the_pet_store_example_of_the_mapping_templates_guide() {
    let mut ctx = body_ctx(
        r#"[{"id": 1, "type": "dog", "price": 249.99}, {"id": 2, "type": "cat", "price": 124.99}, {"id": 3, "type": "fish", "price": 0.99}]"#,
    );
    let template = r#"#set($inputRoot = $input.path('$'))
[
#foreach($elem in $inputRoot)
  {
    "description" : "Item $elem.id is a $elem.type.",
    "askingPrice" : $elem.price
  }#if($foreach.hasNext),#end

#end
]"#;
    let text = render_with(template, &mut ctx);
    let out: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    assert_eq!(
        out,
        json!([
            {"description": "Item 1 is a dog.", "askingPrice": 249.99},
            {"description": "Item 2 is a cat.", "askingPrice": 124.99},
            {"description": "Item 3 is a fish.", "askingPrice": 0.99}
        ])
    );
    assert!(text.starts_with("[\n  {\n    \"description\""), "{text}");
}

#[test]
fn big_bodies_cost_in_proportion_to_their_size() {
    let big = format!("{{\"items\": [{}1]}}", "1, ".repeat(300_000));
    let mut ctx = body_ctx(&big);
    assert_eq!(
        render_with("$input.path('$.items').size()", &mut ctx),
        "300001"
    );
    let copies = "#foreach($a in [1..1000])#set($x = $input.path('$'))#end";
    assert!(try_render(copies, &mut ctx).is_err());
    let trims = "#foreach($a in [1..1000])#set($x = $input.body.trim())#end";
    assert!(try_render(trims, &mut ctx).is_err());
}
