// Credentials in URLs: `http://user:password@host/` is what users type for servers behind basic
// auth, and a URL is copied into summary.json, report.html, server_metrics.jsonl, compare
// outputs and the console. Every place convoy writes or logs a URL passes it through here, as
// secret headers are written "<redacted>".
#pragma once

#include <string>
#include <string_view>

namespace convoy {

inline constexpr std::string_view kRedacted = "<redacted>";

// `url` with the password of its userinfo (`user:password@`) replaced by kRedacted:
// "http://me:pw@h:8000/v1" -> "http://me:<redacted>@h:8000/v1". A URL without a password (or
// no URL at all) comes back unchanged.
std::string redact_url(std::string_view url);

// Free text (an error message, a log line) with every URL in it redacted as redact_url does:
// each "scheme://" starts one.
std::string redact_urls_in(std::string_view text);

}  // namespace convoy
