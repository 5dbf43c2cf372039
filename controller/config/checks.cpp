#include "controller/config/checks.hpp"

#include <array>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "common/curve.hpp"

namespace convoy::config_detail {

namespace {

std::string hex_byte(unsigned char c) {
  static constexpr std::array<char, 17> kHex = {"0123456789abcdef"};
  return std::string("0x") + kHex[c >> 4] + kHex[c & 0xf];
}

// The first space or control character in `text`: "a space at offset 4", "a control character
// (0x0a, a line break) at offset 9"; "" when none.
std::string first_bad_char(std::string_view text, bool space_too) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::string at = " at offset " + std::to_string(i);
    if (c == ' ' && space_too) return "a space" + at;
    if (c < 0x20 || c == 0x7f) {
      const char* what = c == '\n' || c == '\r' ? ", a line break" : c == '\t' ? ", a tab" : "";
      return "a control character (" + hex_byte(c) + what + ")" + at;
    }
  }
  return {};
}

}  // namespace

std::string url_problem(std::string_view url) {
  const std::string bad = first_bad_char(url, true);
  if (bad.empty()) return {};
  return "the URL holds " + bad +
         "; a URL cannot carry it (percent-encode it, e.g. %20 for a space)";
}

std::string control_char_problem(std::string_view text) {
  const std::string bad = first_bad_char(text, false);
  if (bad.empty()) return {};
  return "holds " + bad + "; names appear in console lines, CSV and folder names";
}

std::string folder_name_problem(std::string_view name) {
  if (name == "." || name == "..") {
    return "'" + std::string(name) + "' names an existing folder (" +
           (name == "." ? "this one" : "the parent") +
           "), not a run: the output folder is named after it";
  }
  if (name.find_first_of("/\\") != std::string_view::npos) {
    return "is used in a folder name and must not contain '/' or '\\'";
  }
  return control_char_problem(name);
}

std::string curve_keys_problem(const std::string& dir, int local_workers) {
  namespace fs = std::filesystem;
  const std::string hint = " (write the folder with `convoy keygen " + dir + "`)";
  auto missing = [&](const fs::path& file) -> std::string {
    std::error_code ec;
    if (fs::is_regular_file(file, ec)) return {};
    return "key file '" + file.string() + "' does not exist" + hint;
  };
  const fs::path base(dir);
  try {
    const fs::path controller = base / "controller.key";
    if (auto why = missing(controller); !why.empty()) return why;
    if (read_curve_key_file(controller.string()).secret_z85.empty()) {
      return "key file '" + controller.string() + "' holds no secret key" + hint;
    }
    const fs::path authorized = base / "authorized_workers";
    if (auto why = missing(authorized); !why.empty()) return why;
    read_authorized_keys(authorized.string());
    if (local_workers > 0) {
      for (const char* name : {"controller.pub", "worker-0.key"}) {
        if (auto why = missing(base / name); !why.empty()) return why;
        read_curve_key_file((base / name).string());
      }
    }
  } catch (const std::runtime_error& e) {  // names the file and what is wrong in it
    return e.what();
  }
  return {};
}

}  // namespace convoy::config_detail
