// The YAML text's shape, checked on the parser's events before any node is built, so that no
// input can hang or crash the loader. yaml-cpp builds an alias as the very node it names, so
// `x: &r [*r]` is a cycle that every later walk follows forever (a crash), and a chain of aliases
// ten deep is a document of 10^9 nodes that every walk expands. Here an alias counts what it
// stands for, once, from the anchor's totals: a recursive alias is refused at its line, and the
// expanded document is bounded (limits::kMaxYamlNodes nodes, kMaxYamlBytes bytes of scalar text,
// kMaxYamlDepth levels), with FILE:LINE: key at the place it would cross the bound. One document
// per file: a second `---` document is an error, not silently ignored.
#pragma once

#include <string>

namespace convoy::yaml_guard {

// Throws ConfigError "WHERE:LINE: key: what" when `text` is not one bounded, acyclic YAML
// document. YAML syntax errors are left to the loader (which names them the same way).
// `where` is the file name, or "--set k=v" for an override's value.
void check(const std::string& text, const std::string& where);

}  // namespace convoy::yaml_guard
