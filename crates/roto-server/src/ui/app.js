// Roto's web console: lists what the server holds per account and region through the
// console's read-only endpoints (/_roto/ui/api/*), and follows the live trace with
// /_roto/traces long polls. Every value is set as text, never as markup.
"use strict";

const state = { account: "", region: "", after: 0 };

// How each service's resources are listed: a read operation, where its items are in the
// answer, a name for each, and what opening one shows (read lazily: lines, or a listing of
// the same service read page by page). Services without a panel here show a listing the
// server names (generic).
const PANELS = {
  s3: [{ title: "buckets", op: "ListBuckets", items: (o) => o.Buckets, name: (b) => b.Name,
    open: (b) => ({ op: "ListObjectsV2", input: { Bucket: b.Name, MaxKeys: 100 },
      lines: (o) => (o.Contents || []).map((c) => `${c.Key} (${c.Size} bytes)`) }) }],
  dynamodb: [{ title: "tables", op: "ListTables", items: (o) => o.TableNames, name: (t) => t,
    open: (t) => ({ op: "Scan", input: { TableName: t, Limit: 50 },
      lines: (o) => (o.Items || []).map(plainItem) }) }],
  sqs: [{ title: "queues", op: "ListQueues", items: (o) => o.QueueUrls, name: lastSegment,
    open: (url) => peek("sqs", { QueueUrl: url })
      .then((o) => o.Messages.map((m) => `${m.Visible ? "" : "[in flight] "}${m.Body}`)) }],
  sns: [{ title: "topics", op: "ListTopics", items: (o) => o.Topics, name: (t) => arnName(t.TopicArn),
    open: (t) => ({ op: "ListSubscriptionsByTopic", input: { TopicArn: t.TopicArn },
      lines: (o) => (o.Subscriptions || []).map((s) => `${s.Protocol}: ${s.Endpoint}`) }) }],
  lambda: [{ title: "functions", op: "ListFunctions", items: (o) => o.Functions,
    name: (f) => `${f.FunctionName} (${f.Runtime || f.PackageType})`,
    open: (f) => recentLogs(`/aws/lambda/${f.FunctionName}`) }],
  logs: [{ title: "log groups", op: "DescribeLogGroups", items: (o) => o.logGroups,
    name: (g) => g.logGroupName, open: (g) => recentLogs(g.logGroupName) }],
  events: [{ title: "buses and their rules", op: "ListEventBuses", items: (o) => o.EventBuses,
    name: (b) => b.Name,
    open: (b) => ({ op: "ListRules", input: { EventBusName: b.Name },
      lines: (o) => (o.Rules || []).map((r) => `${r.Name} (${r.State}): ${r.EventPattern || r.ScheduleExpression || ""}`) }) }],
  secretsmanager: [{ title: "secrets", op: "ListSecrets", items: (o) => o.SecretList, name: (s) => s.Name }],
  ssm: [{ title: "parameters", op: "DescribeParameters", items: (o) => o.Parameters,
    name: (p) => `${p.Name} (${p.Type})` }],
  kms: [
    { title: "keys", op: "ListKeys", items: (o) => o.Keys, name: (k) => k.KeyId },
    { title: "aliases", op: "ListAliases", items: (o) => o.Aliases,
      name: (a) => `${a.AliasName} → ${a.TargetKeyId || ""}` },
  ],
  iam: [
    { title: "users", op: "ListUsers", items: (o) => o.Users, name: (u) => u.UserName },
    { title: "roles", op: "ListRoles", items: (o) => o.Roles, name: (r) => r.RoleName },
    { title: "policies", op: "ListPolicies", input: { Scope: "Local" }, items: (o) => o.Policies,
      name: (p) => p.PolicyName },
  ],
  stepfunctions: [
    { title: "state machines", op: "ListStateMachines", items: (o) => o.stateMachines, name: (m) => m.name },
    { title: "activities", op: "ListActivities", items: (o) => o.activities, name: (a) => a.name },
  ],
  kinesis: [{ title: "streams", op: "ListStreams", items: (o) => o.StreamNames, name: (s) => s }],
  apigateway: [{ title: "REST APIs", op: "GetRestApis", items: (o) => o.items,
    name: (a) => `${a.name} (${a.id})` }],
  apigatewayv2: [{ title: "HTTP APIs", op: "GetApis", items: (o) => o.Items,
    name: (a) => `${a.Name} (${a.ApiId})` }],
};

function $(id) { return document.getElementById(id); }

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

function lastSegment(url) { return url.split("/").pop(); }
function arnName(arn) { return arn.split(":").pop(); }

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ ...body, account: state.account, region: state.region }),
  });
  const answer = await response.json();
  if (!response.ok) {
    const e = answer.error || {};
    throw new Error(e.code ? `${e.code}: ${e.message}` : String(answer.error));
  }
  return answer;
}

function call(service, operation, input) { return post("/_roto/ui/api/call", { service, operation, input }); }
function peek(service, input) { return post("/_roto/ui/api/peek", { service, input }); }

// Where a listing's answer carries its next page's token and which input member takes it
// back, across the services' conventions (the first present wins). A token equal to the one
// sent is an echo (S3's ListObjectsV2 repeats ContinuationToken), not a next page.
const PAGE_TOKENS = [
  ["NextContinuationToken", "ContinuationToken"], ["ContinuationToken", "ContinuationToken"],
  ["NextToken", "NextToken"], ["nextToken", "nextToken"], ["NextMarker", "Marker"],
  ["Marker", "Marker"], ["LastEvaluatedTableName", "ExclusiveStartTableName"],
  ["LastEvaluatedKey", "ExclusiveStartKey"], ["position", "position"],
];

function nextPage(input, output) {
  for (const [member, into] of PAGE_TOKENS) {
    const token = output[member];
    if (token === undefined || token === null || token === "") continue;
    if (JSON.stringify(token) === JSON.stringify(input[into])) return null;
    return { ...input, [into]: token };
  }
  return null;
}

// Reads a listing one page at a time into `into`: each page's items as nodes, then a
// "more" button while the service says there is a next page. `report(shown, more)` hears
// of every page; the first page's count is returned.
async function pagedListing(service, op, input, into, nodes, report = () => {}) {
  let shown = 0;
  const load = async (pageInput) => {
    const output = await call(service, op, pageInput);
    const added = nodes(output);
    shown += added.length;
    into.append(...added);
    const next = nextPage(pageInput, output);
    report(shown, Boolean(next));
    if (!next) return;
    const more = el("button", "more…", "more");
    more.type = "button";
    more.addEventListener("click", async () => {
      more.disabled = true;
      try {
        await load(next);
        more.remove();
      } catch (e) {
        more.replaceWith(el("div", e.message, "error"));
      }
    });
    into.append(more);
  };
  await load(input);
  return shown;
}

// A DynamoDB item with its attribute values unwrapped ({"S": "a"} becomes "a").
function plainItem(item) {
  const unwrap = (v) => {
    const [type, inner] = Object.entries(v)[0] || [];
    if (type === "M") return Object.fromEntries(Object.entries(inner).map(([k, x]) => [k, unwrap(x)]));
    if (type === "L") return inner.map(unwrap);
    if (type === "N") return Number(inner);
    return inner;
  };
  return JSON.stringify(Object.fromEntries(Object.entries(item).map(([k, v]) => [k, unwrap(v)])));
}

// The newest events of a log group's most recently written stream.
async function recentLogs(group) {
  const streams = await call("logs", "DescribeLogStreams",
    { logGroupName: group, orderBy: "LastEventTime", descending: true, limit: 1 });
  const stream = (streams.logStreams || [])[0];
  if (!stream) return [];
  const events = await call("logs", "GetLogEvents",
    { logGroupName: group, logStreamName: stream.logStreamName, limit: 50, startFromHead: false });
  return (events.events || []).map((e) => e.message.trimEnd());
}

// A panel for a service the page knows nothing of: one of its input-free listings (a
// List operation first), each item named by its first text member.
function genericPanel(listing) {
  const firstList = (o) => Object.values(o).find(Array.isArray) || [];
  const name = (item) => (typeof item === "string" ? item
    : String(Object.values(item).find((v) => typeof v === "string") || JSON.stringify(item)));
  return { title: listing, op: listing, items: firstList, name };
}

// A generic panel with a choice of the service's listings.
function renderGeneric(service, into) {
  const listings = [...service.listings].sort((a, b) => a.startsWith("Describe") - b.startsWith("Describe"));
  const choice = el("select");
  choice.setAttribute("aria-label", `${service.name} listing`);
  for (const listing of listings) choice.append(el("option", listing));
  const slot = el("div");
  into.append(choice, slot);
  const show = () => {
    slot.replaceChildren();
    return renderPanel(service.name, genericPanel(choice.value), slot);
  };
  choice.addEventListener("change", show);
  return show();
}

const lineNodes = (lines) => lines.map((line) => el("li", line));

// An opened item's contents: fixed lines, or a listing of the service read page by page.
async function fillList(list, service, contents) {
  list.replaceChildren();
  const shown = Array.isArray(contents) ? (list.append(...lineNodes(contents)), contents.length)
    : await pagedListing(service, contents.op, contents.input, list, (o) => lineNodes(contents.lines(o)));
  if (shown === 0) list.prepend(el("li", "(none)", "empty"));
}

// Renders one panel's items; items that can be opened load their contents when opened.
async function renderPanel(service, panel, into) {
  const box = el("details");
  box.open = true;
  const summary = el("summary", `${service} ${panel.title} `);
  const count = el("span", "…", "count");
  summary.append(count);
  box.append(summary);
  into.append(box);
  try {
    const nodes = (output) => (panel.items(output) || [])
      .map((item) => (panel.open ? openable(service, panel, item) : el("div", panel.name(item))));
    const report = (shown, more) => { count.textContent = `(${shown}${more ? "+" : ""})`; };
    const shown = await pagedListing(service, panel.op, panel.input || {}, box, nodes, report);
    if (shown === 0) box.append(el("div", "(none)", "empty"));
  } catch (e) {
    box.append(el("div", e.message, "error"));
  }
}

function openable(service, panel, item) {
  const node = el("details");
  node.append(el("summary", panel.name(item)));
  const list = el("ul");
  node.append(list);
  node.addEventListener("toggle", async () => {
    if (!node.open) return;
    list.replaceChildren(el("li", "loading…"));
    try {
      await fillList(list, service, await panel.open(item));
    } catch (e) {
      list.replaceChildren(el("li", e.message, "error"));
    }
  });
  return node;
}

async function renderResources() {
  const into = $("services");
  into.replaceChildren();
  $("status").textContent = "";
  const shown = [];
  for (const service of state.services) {
    const known = PANELS[service.name];
    if (!known && service.listings.length === 0) continue;
    const slot = el("div");
    into.append(slot);
    shown.push(known ? Promise.all(known.map((panel) => renderPanel(service.name, panel, slot)))
      : renderGeneric(service, slot));
  }
  await Promise.all(shown);
}

async function loadScopes() {
  const answer = await (await fetch("/_roto/ui/api/scopes")).json();
  state.services = answer.services;
  const select = $("scope");
  const chosen = state.account ? `${state.account}/${state.region}` : `${answer.account}/${answer.region}`;
  select.replaceChildren();
  for (const s of answer.scopes) {
    const option = el("option", `${s.account} / ${s.region}`);
    option.value = `${s.account}/${s.region}`;
    select.append(option);
  }
  select.value = chosen;
  [state.account, state.region] = chosen.split("/");
}

// Trace rows: every entry is kept in the table; the filters hide what does not match.
function traceMatches(t) {
  const service = $("f-service").value.trim();
  const operation = $("f-operation").value.trim().toLowerCase();
  const kind = $("f-kind").value;
  return (!service || t.service === service)
    && (!operation || t.operation.toLowerCase().includes(operation))
    && (!kind || t.kind === kind)
    && (!$("f-errors").checked || Boolean(t.error_code) || t.outcome === "failed" || t.outcome === "retrying")
    && (!$("f-scope").checked || (t.account === state.account && t.region === state.region));
}

function traceRow(t) {
  const row = el("tr");
  row.className = t.kind + (t.error_code || t.outcome === "failed" ? " failed" : "");
  row.entry = t;
  const outcome = t.error_code || t.outcome || (t.status ? String(t.status) : "");
  const detail = [t.source, t.target && `→ ${t.target}`, t.attempt && `attempt ${t.attempt}`, t.detail]
    .filter(Boolean).join(" ");
  for (const text of [t.seq, new Date(t.time).toISOString().slice(11, 23), t.kind,
    `${t.account} / ${t.region}`, t.service, t.operation, outcome, t.duration_ms.toFixed(1), detail]) {
    row.append(el("td", String(text)));
  }
  row.hidden = !traceMatches(t);
  return row;
}

function applyFilters() {
  for (const row of $("trace-rows").children) row.hidden = !traceMatches(row.entry);
}

const MAX_ROWS = 2000;

async function followTrace() {
  for (;;) {
    try {
      const response = await fetch(`/_roto/traces?after=${state.after}&wait=20&limit=500`);
      const { traces } = await response.json();
      const rows = $("trace-rows");
      for (const t of traces) {
        rows.prepend(traceRow(t));
        state.after = Math.max(state.after, t.seq);
      }
      while (rows.children.length > MAX_ROWS) rows.lastChild.remove();
    } catch (e) {
      $("status").textContent = `trace: ${e.message}`;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

async function refresh() {
  try {
    await loadScopes();
    await renderResources();
  } catch (e) {
    $("status").textContent = e.message;
  }
}

$("scope").addEventListener("change", () => {
  [state.account, state.region] = $("scope").value.split("/");
  renderResources();
  applyFilters();
});
$("refresh").addEventListener("click", refresh);
for (const id of ["f-service", "f-operation", "f-kind", "f-errors", "f-scope"]) {
  $(id).addEventListener("input", applyFilters);
}
$("f-clear").addEventListener("click", () => $("trace-rows").replaceChildren());

refresh();
followTrace();
