#include "controller/config/yaml_guard.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/config/limits.hpp"

namespace convoy::yaml_guard {

namespace {

// What a node expands to: nodes, bytes of scalar text, and levels (a scalar is 1).
struct Size {
  std::size_t nodes = 0;
  std::size_t bytes = 0;
  std::size_t height = 0;
};

// One open list or mapping.
struct Frame {
  bool map = false;
  YAML::anchor_t anchor = 0;  // 0: none
  Size size;                  // what it holds so far (itself included)
  std::size_t items = 0;      // children seen (in a mapping, keys and values alike)
  std::string key;            // a mapping's current key, when a plain scalar
};

class Guard final : public YAML::EventHandler {
 public:
  explicit Guard(const std::string& where) : where_(where) {}

  bool second_document = false;  // set once the first document ended: any other is refused

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (second_document) {
      fail(mark, "a second YAML document ('---'): a configuration file holds one document");
    }
  }
  void OnDocumentEnd() override { second_document = true; }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    leaf(mark, anchor, Size{1, 0, 1}, nullptr);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                const std::string& value) override {
    leaf(mark, anchor, Size{1, value.size(), 1}, &value);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    for (const auto& f : stack_) {
      if (f.anchor == anchor) {
        fail(mark, "recursive alias: *" + name_of(anchor) +
                       " names a node that contains it (YAML aliases must not form a cycle)");
      }
    }
    const auto it = anchors_.find(anchor);
    // yaml-cpp refuses an unknown alias itself; count it as one node if it ever gets here.
    leaf(mark, 0, it == anchors_.end() ? Size{1, 0, 1} : it->second, nullptr);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    open(mark, anchor, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    open(mark, anchor, true);
  }
  void OnMapEnd() override { close(); }
  void OnAnchor(const YAML::Mark& /*mark*/, const std::string& name) override {
    pending_name_ = name;
  }

 private:
  void name_anchor(YAML::anchor_t anchor) {
    if (anchor != 0 && !pending_name_.empty()) names_[anchor] = pending_name_;
    pending_name_.clear();
  }
  std::string name_of(YAML::anchor_t anchor) const {
    const auto it = names_.find(anchor);
    return it == names_.end() ? "alias" : it->second;
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool map) {
    name_anchor(anchor);
    add(mark, Size{1, 0, 0});
    if (stack_.size() + 1 > limits::kMaxYamlDepth) {
      fail(mark, "nested deeper than " + std::to_string(limits::kMaxYamlDepth) + " levels");
    }
    Frame f;
    f.map = map;
    f.anchor = anchor;
    f.size = Size{1, 0, 1};
    stack_.push_back(std::move(f));
  }

  void close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.anchor != 0) anchors_[f.anchor] = f.size;
    if (!stack_.empty()) {
      stack_.back().size.nodes += f.size.nodes;
      stack_.back().size.bytes += f.size.bytes;
      stack_.back().size.height = std::max(stack_.back().size.height, f.size.height + 1);
      advance(nullptr);
    }
  }

  // A scalar, null or alias standing for `size`.
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, Size size, const std::string* text) {
    name_anchor(anchor);
    if (anchor != 0) anchors_[anchor] = size;
    add(mark, size);
    if (stack_.size() + size.height > limits::kMaxYamlDepth) {
      fail(mark, "nested deeper than " + std::to_string(limits::kMaxYamlDepth) +
                     " levels once aliases are expanded");
    }
    if (stack_.empty()) return;
    Frame& top = stack_.back();
    top.size.nodes += size.nodes;
    top.size.bytes += size.bytes;
    top.size.height = std::max(top.size.height, size.height + 1);
    advance(text);
  }

  // The parent's next child: in a mapping, a key then its value.
  void advance(const std::string* text) {
    Frame& top = stack_.back();
    if (top.map && top.items % 2 == 0) top.key = text ? *text : "?";
    ++top.items;
  }

  // Counts `size` into the whole document's totals, refusing it past the bounds.
  void add(const YAML::Mark& mark, const Size& size) {
    total_.nodes += size.nodes;
    total_.bytes += size.bytes;
    if (total_.nodes > limits::kMaxYamlNodes) {
      fail(mark, "the document holds more than " + std::to_string(limits::kMaxYamlNodes) +
                     " values once aliases are expanded (a configuration is a few hundred)");
    }
    if (total_.bytes > limits::kMaxYamlBytes) {
      fail(mark, "the document holds more than " + std::to_string(limits::kMaxYamlBytes >> 20) +
                     " MiB of text once aliases are expanded");
    }
  }

  // "load.stages[3].name" for the place now being read.
  std::string path() const {
    std::string p;
    for (const auto& f : stack_) {
      if (f.map) {
        if (f.items % 2 == 1) p += (p.empty() ? "" : ".") + f.key;
      } else {
        p += "[" + std::to_string(f.items) + "]";
      }
    }
    return p;
  }

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what) const {
    std::string message = where_;
    // An override's value is one line of the command line: no line number to give.
    if (mark.line >= 0 && where_.rfind("--set ", 0) != 0) {
      message += ":" + std::to_string(mark.line + 1);
    }
    const std::string p = path();
    throw ConfigError(message + ": " + (p.empty() ? "" : p + ": ") + what);
  }

  const std::string& where_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, Size> anchors_;
  std::map<YAML::anchor_t, std::string> names_;
  std::string pending_name_;
  Size total_;
};

}  // namespace

void check(const std::string& text, const std::string& where) {
  std::istringstream in(text);
  Guard guard(where);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(guard)) {
    }
  } catch (const YAML::Exception&) {
    // A syntax error: YAML::Load reports it with its line.
  }
}

}  // namespace convoy::yaml_guard
