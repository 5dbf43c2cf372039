// load_impl (impl.hpp): tokenizer.json into the pipeline, RapidJSON's DOM.
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tokenizer/impl.hpp"

namespace convoy::tokenizer {

namespace {

using Value = rapidjson::Value;

// Ids are dense (decode keeps a table of them): far past any real vocabulary (262,145 in
// Gemma 3) is a broken file, refused before it allocates.
constexpr std::uint32_t kMaxId = 1U << 24;

// GPT-2's pattern, which ByteLevel applies when use_regex is true (byte_level.rs).
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct Reader {
  const std::string& path;

  [[noreturn]] void fail(const std::string& reason) const { throw LoadError(path + ": " + reason); }

  std::string str(const Value& v, const char* key, const char* where) const {
    const auto it = v.FindMember(key);
    if (it == v.MemberEnd() || !it->value.IsString()) {
      fail(std::string(where) + ": \"" + key + "\" must be a string");
    }
    return {it->value.GetString(), it->value.GetStringLength()};
  }
  static bool flag(const Value& v, const char* key, bool fallback) {
    const auto it = v.FindMember(key);
    return it != v.MemberEnd() && it->value.IsBool() ? it->value.GetBool() : fallback;
  }
  std::shared_ptr<Regex> regex(const std::string& onig, const char* where) const {
    try {
      return std::make_shared<Regex>(onig_to_pcre2(onig));
    } catch (const std::exception& e) {
      fail(std::string(where) + ": pattern " + onig + ": " + e.what());
    }
  }
  // A {"String": s} or {"Regex": r} pattern: the literal, or the compiled regex.
  void pattern(const Value& v, const char* where, std::string& literal,
               std::shared_ptr<Regex>& re) const {
    const auto it = v.FindMember("pattern");
    if (it == v.MemberEnd() || !it->value.IsObject()) fail(std::string(where) + ": no pattern");
    const Value& p = it->value;
    if (p.HasMember("String")) {
      literal = str(p, "String", where);
    } else if (p.HasMember("Regex")) {
      re = regex(str(p, "Regex", where), where);
    } else {
      fail(std::string(where) + ": pattern is neither String nor Regex");
    }
  }

  void normalizer(const Value& v, std::vector<NormalizerStep>& out) const;
  void pre_tokenizer(const Value& v, std::vector<PreTokenizerStep>& out) const;
  void decoder(const Value& v, std::vector<DecoderStep>& out) const;
  std::unique_ptr<Bpe> model(const Value& v, bool byte_level) const;
  void added_tokens(const Value& doc, Tokenizer::Impl& impl) const;
};

void Reader::normalizer(const Value& v, std::vector<NormalizerStep>& out) const {
  if (v.IsNull()) return;
  if (!v.IsObject()) fail("normalizer must be an object or null");
  const std::string type = str(v, "type", "normalizer");
  if (type == "Sequence") {
    const auto it = v.FindMember("normalizers");
    if (it == v.MemberEnd() || !it->value.IsArray()) fail("normalizer Sequence: no normalizers");
    for (const Value& n : it->value.GetArray()) normalizer(n, out);
    return;
  }
  NormalizerStep step;
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    using K = NormalizerStep::Kind;
    step.kind = type == "NFC"    ? K::kNfc
                : type == "NFD"  ? K::kNfd
                : type == "NFKC" ? K::kNfkc
                                 : K::kNfkd;
  } else if (type == "Prepend") {
    step.kind = NormalizerStep::Kind::kPrepend;
    step.content = str(v, "prepend", "normalizer Prepend");
  } else if (type == "Replace") {
    step.kind = NormalizerStep::Kind::kReplace;
    pattern(v, "normalizer Replace", step.literal, step.regex);
    step.content = str(v, "content", "normalizer Replace");
  } else {
    fail("unsupported normalizer \"" + type + "\"");
  }
  out.push_back(std::move(step));
}

SplitBehavior behavior_of(const std::string& name, const Reader& r) {
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  r.fail("pre_tokenizer Split: unsupported behavior \"" + name + "\"");
}

void Reader::pre_tokenizer(const Value& v, std::vector<PreTokenizerStep>& out) const {
  if (v.IsNull()) return;
  if (!v.IsObject()) fail("pre_tokenizer must be an object or null");
  const std::string type = str(v, "type", "pre_tokenizer");
  if (!out.empty() && out.back().kind == PreTokenizerStep::Kind::kByteLevel) {
    fail("pre_tokenizer \"" + type + "\" after ByteLevel is not supported");
  }
  PreTokenizerStep step;
  if (type == "Sequence") {
    const auto it = v.FindMember("pretokenizers");
    if (it == v.MemberEnd() || !it->value.IsArray()) fail("pre_tokenizer Sequence: no list");
    for (const Value& p : it->value.GetArray()) pre_tokenizer(p, out);
    return;
  }
  if (type == "Split") {
    pattern(v, "pre_tokenizer Split", step.literal, step.regex);
    step.behavior = behavior_of(str(v, "behavior", "pre_tokenizer Split"), *this);
    step.invert = flag(v, "invert", false);
  } else if (type == "ByteLevel") {
    step.kind = PreTokenizerStep::Kind::kByteLevel;
    step.add_prefix_space = flag(v, "add_prefix_space", true);
    if (flag(v, "use_regex", true)) step.regex = regex(kGpt2Pattern, "ByteLevel");
  } else if (type == "Digits") {
    step.regex = regex(flag(v, "individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)", "Digits");
  } else if (type == "Metaspace") {
    step.kind = PreTokenizerStep::Kind::kMetaspace;
    step.replacement = str(v, "replacement", "pre_tokenizer Metaspace");
    step.split = flag(v, "split", true);
    const auto it = v.FindMember("prepend_scheme");
    const std::string scheme = it != v.MemberEnd() && it->value.IsString()
                                   ? it->value.GetString()
                                   : (flag(v, "add_prefix_space", true) ? "always" : "never");
    using P = PreTokenizerStep::Prepend;
    step.prepend = scheme == "first" ? P::kFirst : scheme == "never" ? P::kNever : P::kAlways;
  } else {
    fail("unsupported pre_tokenizer \"" + type + "\"");
  }
  out.push_back(std::move(step));
}

void Reader::decoder(const Value& v, std::vector<DecoderStep>& out) const {
  if (v.IsNull()) return;
  if (!v.IsObject()) fail("decoder must be an object or null");
  const std::string type = str(v, "type", "decoder");
  DecoderStep step;
  using K = DecoderStep::Kind;
  if (type == "Sequence") {
    const auto it = v.FindMember("decoders");
    if (it == v.MemberEnd() || !it->value.IsArray()) fail("decoder Sequence: no decoders");
    for (const Value& d : it->value.GetArray()) decoder(d, out);
    return;
  }
  if (type == "ByteLevel") {
    step.kind = K::kByteLevel;
  } else if (type == "ByteFallback") {
    step.kind = K::kByteFallback;
  } else if (type == "Fuse") {
    step.kind = K::kFuse;
  } else if (type == "Replace") {
    step.kind = K::kReplace;
    std::shared_ptr<Regex> unused;
    pattern(v, "decoder Replace", step.pattern, unused);
    if (unused) fail("decoder Replace: a Regex pattern is not supported");
    step.content = str(v, "content", "decoder Replace");
  } else if (type == "Strip") {
    step.kind = K::kStrip;
    step.content = str(v, "content", "decoder Strip");
    const auto num = [&](const char* key) {
      const auto it = v.FindMember(key);
      return it != v.MemberEnd() && it->value.IsUint() ? it->value.GetUint() : 0U;
    };
    step.start = num("start");
    step.stop = num("stop");
  } else if (type == "Metaspace") {
    step.kind = K::kMetaspace;
    step.pattern = str(v, "replacement", "decoder Metaspace");
    const auto it = v.FindMember("prepend_scheme");
    step.prepend = !(it != v.MemberEnd() && it->value.IsString() &&
                     std::string_view(it->value.GetString()) == "never");
  } else {
    fail("unsupported decoder \"" + type + "\"");
  }
  out.push_back(std::move(step));
}

std::unique_ptr<Bpe> Reader::model(const Value& v, bool byte_level) const {
  if (!v.IsObject()) fail("not a tokenizer.json (no \"model\" object)");
  const auto ty = v.FindMember("type");
  std::string type = ty != v.MemberEnd() && ty->value.IsString() ? ty->value.GetString() : "";
  if (type.empty() && v.HasMember("merges")) type = "BPE";  // older files name no type
  if (type != "BPE") {
    fail("unsupported model type \"" + type + "\" (convoy reads BPE tokenizers)");
  }
  const auto vo = v.FindMember("vocab");
  const auto me = v.FindMember("merges");
  if (vo == v.MemberEnd() || !vo->value.IsObject()) fail("model: \"vocab\" must be an object");
  if (me == v.MemberEnd() || !me->value.IsArray()) fail("model: \"merges\" must be an array");
  Vocab vocab;
  vocab.reserve(vo->value.MemberCount());
  for (const auto& m : vo->value.GetObject()) {
    if (!m.value.IsUint() || m.value.GetUint() >= kMaxId) {
      fail("model: vocab id of \"" + std::string(m.name.GetString()) + "\" is not an id");
    }
    vocab.insert(std::string_view(m.name.GetString(), m.name.GetStringLength()), m.value.GetUint());
  }
  std::vector<std::pair<std::string_view, std::string_view>> merges;
  merges.reserve(me->value.Size());
  for (const Value& m : me->value.GetArray()) {
    if (m.IsString()) {  // "a b"
      const std::string_view line(m.GetString(), m.GetStringLength());
      const auto sp = line.find(' ');
      if (sp == std::string_view::npos || line.find(' ', sp + 1) != std::string_view::npos) {
        fail("model: merge \"" + std::string(line) + "\" is not two strings");
      }
      merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
    } else if (m.IsArray() && m.Size() == 2 && m[0].IsString() && m[1].IsString()) {
      merges.emplace_back(std::string_view(m[0].GetString(), m[0].GetStringLength()),
                          std::string_view(m[1].GetString(), m[1].GetStringLength()));
    } else {
      fail("model: a merge is neither \"a b\" nor [a, b]");
    }
  }
  BpeOptions options;
  options.byte_level = byte_level;
  options.byte_fallback = flag(v, "byte_fallback", false);
  options.ignore_merges = flag(v, "ignore_merges", false);
  options.fuse_unk = flag(v, "fuse_unk", false);
  for (const char* key : {"dropout", "continuing_subword_prefix", "end_of_word_suffix"}) {
    const auto it = v.FindMember(key);
    const bool unset = it == v.MemberEnd() || it->value.IsNull() ||
                       (it->value.IsString() && it->value.GetStringLength() == 0) ||
                       (it->value.IsNumber() && it->value.GetDouble() == 0.0);
    if (!unset) fail(std::string("model: \"") + key + "\" is not supported");
  }
  const auto unk = v.FindMember("unk_token");
  if (unk != v.MemberEnd() && unk->value.IsString()) {
    const std::uint32_t* id = vocab.find(std::string_view(unk->value.GetString()));
    if (id == nullptr) fail("model: unk_token is not in the vocabulary");
    options.unk_id = *id;
  }
  try {
    return std::make_unique<Bpe>(std::move(vocab), merges, options);
  } catch (const std::invalid_argument& e) {
    fail(std::string("model: ") + e.what());
  }
}

void Reader::added_tokens(const Value& doc, Tokenizer::Impl& impl) const {
  const auto it = doc.FindMember("added_tokens");
  if (it == doc.MemberEnd() || it->value.IsNull()) return;
  if (!it->value.IsArray()) fail("\"added_tokens\" must be an array");
  for (const Value& a : it->value.GetArray()) {
    if (!a.IsObject() || !a.HasMember("id") || !a["id"].IsUint() || a["id"].GetUint() >= kMaxId) {
      fail("added_tokens: each needs an \"id\" (below 16,777,216)");
    }
    AddedToken tok;
    tok.content = str(a, "content", "added_tokens");
    tok.id = a["id"].GetUint();
    tok.lstrip = flag(a, "lstrip", false);
    tok.rstrip = flag(a, "rstrip", false);
    tok.single_word = flag(a, "single_word", false);
    if (impl.id_to_token.size() <= tok.id) impl.id_to_token.resize(tok.id + 1);
    impl.id_to_token[tok.id] = tok.content;
    if (flag(a, "normalized", !flag(a, "special", false))) {
      normalize(impl.normalizers, tok.content);
      impl.normalized_added.add(tok);
    } else {
      impl.raw_added.add(tok);
    }
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoadError(path + ": cannot open (no such file, or not readable)");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw LoadError(path + ": read failed");
  return std::move(ss).str();
}

}  // namespace

std::unique_ptr<Tokenizer::Impl> load_impl(const std::string& path) {
  return parse_impl(read_file(path), path);
}

std::unique_ptr<Tokenizer::Impl> parse_impl(std::string text, const std::string& path) {
  // Parsed in place: the DOM's strings (and the merges' views) point into text, no copies.
  rapidjson::Document doc;
  doc.ParseInsitu(text.data());
  const Reader r{path};
  if (doc.HasParseError()) {
    r.fail("not valid JSON at byte " + std::to_string(doc.GetErrorOffset()) + ": " +
           rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject() || !doc.HasMember("model")) r.fail("not a tokenizer.json (no \"model\")");
  auto impl = std::make_unique<Tokenizer::Impl>();
  impl->path = path;
  const Value& root = doc;
  const auto section = [&](const char* key) -> const Value& {
    static const Value null_value;
    const auto it = root.FindMember(key);
    return it == root.MemberEnd() ? null_value : it->value;
  };
  r.normalizer(section("normalizer"), impl->normalizers);
  r.pre_tokenizer(section("pre_tokenizer"), impl->pre_tokenizers);
  r.decoder(section("decoder"), impl->decoders);
  // The model sees bytes as GPT-2's byte-level characters when a ByteLevel pre-tokenizer (last,
  // see pre_tokenizer) maps them.
  const bool byte_level = std::any_of(
      impl->pre_tokenizers.begin(), impl->pre_tokenizers.end(),
      [](const PreTokenizerStep& s) { return s.kind == PreTokenizerStep::Kind::kByteLevel; });
  impl->bpe = r.model(doc["model"], byte_level);
  impl->bpe->vocab().for_each([&](std::string_view token, std::uint32_t id) {
    if (impl->id_to_token.size() <= id) impl->id_to_token.resize(id + 1);
    impl->id_to_token[id] = token;
  });
  r.added_tokens(doc, *impl);
  return impl;
}

}  // namespace convoy::tokenizer
