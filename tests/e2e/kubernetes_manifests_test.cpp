// deploy/kubernetes/ checked offline: every manifest has the fields its kind needs, the pieces
// refer to each other correctly (Service selector, ConfigMap, ports, the workers' --connect), and
// the embedded convoy config passes convoy's own validation.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "e2e/subprocess.hpp"

namespace fs = std::filesystem;
using convoy::test::src;

namespace {

const fs::path kDir = src("deploy/kubernetes");

struct Manifests {
  std::vector<std::string> files;                       // kustomization resources
  std::map<std::string, std::vector<YAML::Node>> kind;  // kind -> documents
};

Manifests load_manifests() {
  Manifests m;
  const YAML::Node kustomization = YAML::LoadFile((kDir / "kustomization.yaml").string());
  REQUIRE(kustomization["resources"].IsSequence());
  for (const auto& r : kustomization["resources"]) m.files.push_back(r.as<std::string>());
  for (const auto& file : m.files) {
    for (const auto& doc : YAML::LoadAllFromFile((kDir / file).string())) {
      if (doc.IsNull()) continue;
      REQUIRE_MESSAGE(doc.IsMap(), file);
      m.kind[doc["kind"].as<std::string>("")].push_back(doc);
    }
  }
  return m;
}

YAML::Node named(const Manifests& m, const std::string& kind, const std::string& name) {
  auto it = m.kind.find(kind);
  if (it == m.kind.end()) return YAML::Node();
  for (const auto& doc : it->second) {
    if (doc["metadata"]["name"].as<std::string>("") == name) return doc;
  }
  return YAML::Node();
}

// The single container of a Job's or Deployment's pod template.
YAML::Node container_of(const YAML::Node& workload) {
  const YAML::Node containers = workload["spec"]["template"]["spec"]["containers"];
  REQUIRE(containers.IsSequence());
  REQUIRE(containers.size() == 1);
  return containers[0];
}

std::vector<std::string> strings(const YAML::Node& seq) {
  std::vector<std::string> out;
  for (const auto& s : seq) out.push_back(s.as<std::string>());
  return out;
}

// Every label of `selector` is on `labels`.
bool selects(const YAML::Node& selector, const YAML::Node& labels) {
  if (!selector.IsMap() || selector.size() == 0) return false;
  for (const auto& kv : selector) {
    const std::string key = kv.first.as<std::string>();
    if (!labels[key] || labels[key].as<std::string>() != kv.second.as<std::string>()) return false;
  }
  return true;
}

int port_of(const std::string& endpoint) {
  return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
}

// The Service port named `name`; checks that it targets a container port of `container`.
int service_port(const YAML::Node& service, const std::string& name, const YAML::Node& container) {
  for (const auto& p : service["spec"]["ports"]) {
    if (p["name"].as<std::string>("") != name) continue;
    const std::string target = p["targetPort"].as<std::string>("");
    bool found = false;
    for (const auto& cp : container["ports"]) {
      found = found || cp["name"].as<std::string>("") == target ||
              cp["containerPort"].as<std::string>("") == target;
    }
    CHECK_MESSAGE(found, "targetPort " << target << " is not a port of the container");
    return p["port"].as<int>();
  }
  FAIL("the Service has no port named " << name);
  return -1;
}

}  // namespace

TEST_CASE("the Kubernetes manifests are well formed and agree with each other") {
  const Manifests m = load_manifests();

  SUBCASE("kustomization lists every manifest in the folder") {
    std::set<std::string> listed(m.files.begin(), m.files.end());
    std::set<std::string> present;
    for (const auto& e : fs::directory_iterator(kDir)) {
      const std::string name = e.path().filename().string();
      if (e.path().extension() == ".yaml" && name != "kustomization.yaml") present.insert(name);
    }
    CHECK(listed == present);
  }

  SUBCASE("every document has apiVersion, kind, metadata.name and its body") {
    const std::map<std::string, std::string> api = {{"ConfigMap", "v1"},
                                                    {"Service", "v1"},
                                                    {"PersistentVolumeClaim", "v1"},
                                                    {"Job", "batch/v1"},
                                                    {"Deployment", "apps/v1"}};
    size_t documents = 0;
    for (const auto& [kind, docs] : m.kind) {
      REQUIRE_MESSAGE(api.count(kind) == 1, "unexpected kind '" << kind << "'");
      for (const auto& doc : docs) {
        ++documents;
        CHECK(doc["apiVersion"].as<std::string>("") == api.at(kind));
        const std::string name = doc["metadata"]["name"].as<std::string>("");
        CHECK_MESSAGE(!name.empty(), kind);
        CHECK_MESSAGE(name.size() <= 63, name);
        CHECK_MESSAGE(
            name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos,
            name);
        if (kind == "ConfigMap") {
          CHECK(doc["data"].IsMap());
        } else {
          CHECK_MESSAGE(doc["spec"].IsMap(), kind << " " << name);
        }
        if (kind == "Job" || kind == "Deployment") {
          const YAML::Node pod = doc["spec"]["template"]["spec"];
          CHECK(pod["containers"].IsSequence());
          for (const auto& c : pod["containers"]) {
            CHECK(!c["name"].as<std::string>("").empty());
            CHECK(!c["image"].as<std::string>("").empty());
          }
        }
        if (kind == "Job") {
          const std::string restart =
              doc["spec"]["template"]["spec"]["restartPolicy"].as<std::string>("");
          CHECK_MESSAGE((restart == "Never" || restart == "OnFailure"), name);
        }
      }
    }
    CHECK(documents == 7);  // ConfigMap, Service, Job, PVC, Job, Deployment, Service
  }

  SUBCASE("controller Job, Service, ConfigMap and worker Job fit together") {
    const YAML::Node config_map = named(m, "ConfigMap", "convoy-config");
    const YAML::Node service = named(m, "Service", "convoy-controller");
    const YAML::Node controller = named(m, "Job", "convoy-controller");
    const YAML::Node workers = named(m, "Job", "convoy-workers");
    REQUIRE(config_map.IsMap());
    REQUIRE(service.IsMap());
    REQUIRE(controller.IsMap());
    REQUIRE(workers.IsMap());

    // The embedded config is valid for convoy itself.
    REQUIRE(config_map["data"]["convoy.yaml"]);
    const convoy::Config config = convoy::parse_config(
        config_map["data"]["convoy.yaml"].as<std::string>(), "configmap.yaml:convoy.yaml");
    CHECK(config.workers.local == 0);
    REQUIRE(config.workers.expect.has_value());
    REQUIRE(config.workers.results_listen.has_value());
    CHECK(config.workers.listen.rfind("tcp://0.0.0.0:", 0) == 0);
    CHECK(config.workers.results_listen->rfind("tcp://0.0.0.0:", 0) == 0);

    // The controller pod: selected by the Service, runs `convoy controller` on the mounted config.
    const YAML::Node pod_labels = controller["spec"]["template"]["metadata"]["labels"];
    CHECK(selects(service["spec"]["selector"], pod_labels));
    CHECK_FALSE(
        selects(service["spec"]["selector"], workers["spec"]["template"]["metadata"]["labels"]));
    const YAML::Node ctl = container_of(controller);
    const std::vector<std::string> command = strings(ctl["command"]);
    REQUIRE(command.size() >= 3);
    CHECK(command[0] == "convoy");
    CHECK(command[1] == "controller");
    std::string config_volume;
    for (const auto& v : controller["spec"]["template"]["spec"]["volumes"]) {
      if (v["configMap"] && v["configMap"]["name"].as<std::string>("") == "convoy-config") {
        config_volume = v["name"].as<std::string>();
      }
      if (v["persistentVolumeClaim"]) {
        const std::string claim = v["persistentVolumeClaim"]["claimName"].as<std::string>("");
        CHECK_MESSAGE(named(m, "PersistentVolumeClaim", claim).IsMap(), claim);
      }
    }
    REQUIRE_FALSE(config_volume.empty());
    bool config_mounted = false;
    for (const auto& vm : ctl["volumeMounts"]) {
      if (vm["name"].as<std::string>("") != config_volume) continue;
      config_mounted = command[2] == vm["mountPath"].as<std::string>() + "/convoy.yaml";
    }
    CHECK(config_mounted);

    // Ports: what the config binds is what the Service forwards.
    CHECK(service_port(service, "control", ctl) == port_of(config.workers.listen));
    CHECK(service_port(service, "results", ctl) == port_of(*config.workers.results_listen));

    // Workers: as many as the controller expects, connecting to the Service's control port.
    CHECK(workers["spec"]["parallelism"].as<int>() == *config.workers.expect);
    CHECK(workers["spec"]["completions"].as<int>() == *config.workers.expect);
    const YAML::Node wrk = container_of(workers);
    CHECK(strings(wrk["command"]) == std::vector<std::string>{"convoy-worker"});
    const std::vector<std::string> args = strings(wrk["args"]);
    auto connect = std::find(args.begin(), args.end(), "--connect");
    REQUIRE(connect != args.end());
    REQUIRE(connect + 1 != args.end());
    CHECK(*(connect + 1) == "tcp://" + service["metadata"]["name"].as<std::string>() + ":" +
                                std::to_string(port_of(config.workers.listen)));
    CHECK(wrk["image"].as<std::string>() == ctl["image"].as<std::string>());

    // The API key variable is set on the workers only.
    auto env_names = [](const YAML::Node& c) {
      std::set<std::string> names;
      for (const auto& e : c["env"]) names.insert(e["name"].as<std::string>());
      return names;
    };
    CHECK(env_names(wrk).count(config.target.api_key_env) == 1);
    CHECK(env_names(ctl).count(config.target.api_key_env) == 0);
    for (const auto& e : wrk["env"]) CHECK_FALSE(e["value"]);  // no literal secrets

    // The target: when it is the in-cluster mock, its Service selects the mock's pods.
    const std::string url = config.target.url;
    if (url.rfind("http://convoy-mock:", 0) == 0) {
      const YAML::Node mock_service = named(m, "Service", "convoy-mock");
      const YAML::Node mock = named(m, "Deployment", "convoy-mock");
      REQUIRE(mock_service.IsMap());
      REQUIRE(mock.IsMap());
      CHECK(selects(mock_service["spec"]["selector"],
                    mock["spec"]["template"]["metadata"]["labels"]));
      CHECK(selects(mock["spec"]["selector"]["matchLabels"],
                    mock["spec"]["template"]["metadata"]["labels"]));
      CHECK(service_port(mock_service, "http", container_of(mock)) == port_of(url));
    }
  }
}
