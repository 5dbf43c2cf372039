#include "common/redact.hpp"

namespace convoy {

namespace {

// Where the authority that starts at `from` ends: the first '/', '?', '#' or whitespace.
size_t authority_end(std::string_view text, size_t from) {
  for (size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '/' || c == '?' || c == '#' || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
        c == '"' || c == '\'' || c == '<' || c == '>') {
      return i;
    }
  }
  return text.size();
}

// Appends the authority text[from, end) to `out`, its password redacted.
void append_authority(std::string& out, std::string_view text, size_t from, size_t end) {
  const std::string_view authority = text.substr(from, end - from);
  const size_t at = authority.rfind('@');  // a password may hold '@' only percent-encoded,
  if (at == std::string_view::npos) {      // but the last one ends the userinfo either way
    out.append(authority);
    return;
  }
  const std::string_view userinfo = authority.substr(0, at);
  const size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) {
    out.append(authority);
    return;
  }
  out.append(userinfo.substr(0, colon + 1));
  out.append(kRedacted);
  out.append(authority.substr(at));
}

}  // namespace

std::string redact_url(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, scheme + 3));
  const size_t from = scheme + 3;
  const size_t end = authority_end(url, from);
  append_authority(out, url, from, end);
  out.append(url.substr(end));
  return out;
}

std::string redact_urls_in(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t done = 0;
  for (size_t scheme = text.find("://"); scheme != std::string_view::npos;
       scheme = text.find("://", done)) {
    const size_t from = scheme + 3;
    const size_t end = authority_end(text, from);
    out.append(text.substr(done, from - done));
    append_authority(out, text, from, end);
    done = end;
  }
  out.append(text.substr(done));
  return out;
}

}  // namespace convoy
