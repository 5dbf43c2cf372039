// A deterministic multilingual test corpus for the tokenizer (tests/tokenizer, bench/): prose in
// several scripts, code, emoji and other 4-byte characters, whitespace runs, digits, valid but
// unusual UTF-8, random characters from long-assigned blocks, and the given special and added
// tokens (each at least once), glued to text and beside each other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace convoy::test {

inline void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

inline const std::vector<std::string>& corpus_fragments() {
  using namespace std::string_literals;
  static const std::vector<std::string> fragments = {
      "The quick brown fox jumps over the lazy dog.",
      "I'm sure they'll say it's fine, but we'd rather you DIDN'T. She's here; they've gone.",
      "WE'LL SEE. You'RE right, it'S 'ſ odd — “quoted” ‘single’ and l’homme d’affaires.",
      "Über die Brücke gehen Äpfel, Öl und Straßen; ça, garçon, naïve café, Ærø, Øresund.",
      "Cafe\xCC\x81 vs Caf\xC3\xA9, n\xCC\x83 vs \xC3\xB1, A\xCC\x8A vs \xC3\x85, "
      "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB (jamo) vs \xED\x95\x9C.",
      "Съешь же ещё этих мягких французских булок, да выпей чаю. Москва 2024.",
      "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Αλφα, βήτα, γάμμα.",
      "صِف خَلقَ خَودِ كَمِثلِ الشَمسِ إِذ بَزَغَت — مرحبا بالعالم ١٢٣٤٥٦٧٨٩٠",
      "עטלף אבק נס דרך מזגן שהתפוצץ כי חם. שלום עולם",
      "ऋषियों को सताने वाले दुष्ट राक्षसों के राजा रावण का सर्वनाश करने वाले विष्णुवतार भगवान श्रीराम",
      "เป็นมนุษย์สุดประเสริฐเลิศคุณค่า กว่าบรรดาฝูงสัตว์เดรัจฉาน",
      "我能吞下玻璃而不伤身体。你好，世界！今天是2024年12月6日。中华人民共和国",
      "いろはにほへと ちりぬるを わかよたれそ つねならむ。カタカナ、ひらがな、漢字。ｶﾀｶﾅ",
      "다람쥐 헌 쳇바퀴에 타고파. 안녕하세요 세계!",
      "Tiếng Việt có dấu: Trăm năm trong cõi người ta, chữ tài chữ mệnh khéo là ghét nhau.",
      "Emoji: 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇯🇵🇺🇸 "
      "❤️ "
      "✨🔥💯 "
      "🤖 "
      "🧑🏿‍🚀",
      "Math 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝐁𝐨𝐥𝐝 𝟙𝟚𝟛 ∀x∈ℝ: x²≥0, ∑ᵢ aᵢ ≤ ∞, √2 ≈ 1.41421356, ½ ¾ Ⅻ ⅷ",
      "Rare: 𠀀𠀁𠀂 𝄞 𐍈 🀄 \xF4\x8F\xBF\xBF \xEE\x80\x80 \xEF\xBB\xBF BOM \xEF\xBF\xBD "
      "\xEF\xBF\xBF end",
      "Zero\xE2\x80\x8Bwidth\xE2\x80\x8Djoiner\xE2\x80\x8F rtl \xE2\x80\xAE override "
      "\xE2\x81\xA0 ctrl\x01\x02\x7F and nul\x00 here"s,
      "Whitespace:\xC2\xA0nbsp\xE3\x80\x80ideographic\xE2\x80\x89thin\xC2\x85nel"
      "\xE2\x80\xA8ls\xE2\x80\xA9ps\xE1\xA0\x8Emvs\x0B vt\x0C ff\x1C fs",
      "    four spaces\n\ttab\t\ttabs\r\nCRLF\r\n\r\n\n\n\nnewlines   \n  \t \n",
      "Numbers: 0 7 42 314 2718 31415 1234567890 1,000,000 3.14159 -17 +8e-3 0x1F 0b1010 "
      "007 1st 2nd 3rd １２３ ٤٥٦ ৩৪ ²³",
      "int main(int argc, char** argv) {\n  std::vector<int> v{1, 2, 3};\n  for (auto& x : v) "
      "x *= 2;\n  return v.size() > 2 ? 0 : 1;\n}\n",
      "def fib(n: int) -> int:\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n    a, b = 0, "
      "1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
      "{\"name\": \"convoy\", \"tokens\": [1, 2, 3], \"nested\": {\"ok\": true, \"pi\": 3.14}}",
      "<html><body class=\"x\"><p>Hello &amp; welcome!</p><br/></body></html>",
      "SELECT id, name FROM users WHERE age >= 18 AND name LIKE '%son' ORDER BY id DESC;",
      "https://example.com/path/to/page?query=1&lang=en#section-2 user@example.org",
      "!!!??? ... --- *** ### $$$ %%% ^^^ &&& ((( ))) [[[ ]]] {{{ }}} ||| \\\\ /// ~~~ ```",
      "camelCaseWord PascalCaseWord snake_case_word SCREAMING_CASE kebab-case-word HTTPServer",
      "a\xCC\x80\xCC\x81\xCC\x82 \xCC\x88leading combining, e\xEF\xB8\x8F vs16, "
      "\xE2\x98\xBA\xEF\xB8\x8E vs15",
  };
  return fragments;
}

// Characters drawn at random come from these long-assigned ranges (so the reference's Unicode
// version and PCRE2's agree on their categories).
inline const std::vector<std::pair<char32_t, char32_t>>& corpus_ranges() {
  static const std::vector<std::pair<char32_t, char32_t>> ranges = {
      {0x20, 0x7E},       {0xA1, 0xFF},       {0x100, 0x17F},     {0x300, 0x36F},
      {0x391, 0x3A1},     {0x3B1, 0x3C9},     {0x410, 0x44F},     {0x621, 0x64A},
      {0x660, 0x669},     {0x905, 0x939},     {0x93E, 0x94D},     {0xE01, 0xE3A},
      {0x2010, 0x2027},   {0x2190, 0x21FF},   {0x2500, 0x257F},   {0x3041, 0x3096},
      {0x30A1, 0x30FA},   {0x4E00, 0x9FA5},   {0xAC00, 0xD7A3},   {0xFF01, 0xFF5E},
      {0x1F600, 0x1F64F}, {0x1F300, 0x1F5FF}, {0x1D400, 0x1D454}, {0x20000, 0x2A6D6},
  };
  return ranges;
}

// Documents of about 50 to 2,000 bytes, plus a few of 64 KiB (one long word for the
// Metaspace-style tokenizers), until total_bytes; specials each appear at least once. Without
// random_chars, only the fragments and numbers: text whose words recur, as prompts' do.
inline std::vector<std::string> build_corpus(const std::vector<std::string>& specials,
                                             std::size_t total_bytes, std::uint32_t seed = 31,
                                             bool random_chars = true) {
  std::mt19937 rng(seed);
  const auto pick = [&](std::size_t n) {
    return static_cast<std::size_t>(std::uniform_int_distribution<std::size_t>(0, n - 1)(rng));
  };
  const auto& fragments = corpus_fragments();
  const auto& ranges = corpus_ranges();
  static const std::vector<std::string> separators = {" ",  "",     "\n",  "  ",
                                                      "\t", "\n\n", " \n", "   "};
  std::vector<std::string> docs;
  std::size_t total = 0;
  std::size_t next_special = 0;
  while (total < total_bytes || next_special < specials.size()) {
    const bool big = docs.size() % 97 == 5;
    const std::size_t target = big ? 65536 : 50 + pick(1950);
    std::string doc;
    while (doc.size() < target) {
      const std::size_t kind = pick(10);
      if (kind < 5 || (!random_chars && kind < 7)) {
        doc += fragments[pick(fragments.size())];
      } else if (kind < 7) {
        const auto& [lo, hi] = ranges[pick(ranges.size())];
        for (std::size_t k = 0, n = 1 + pick(12); k < n; ++k) {
          append_utf8(doc, lo + static_cast<char32_t>(pick(hi - lo + 1)));
        }
      } else if (kind < 8) {
        doc += std::to_string(rng());
      } else if (!specials.empty()) {
        const std::size_t s =
            next_special < specials.size() ? next_special++ : pick(specials.size());
        doc += specials[s];
        if (pick(3) == 0) doc += specials[pick(specials.size())];  // two in a row
      }
      doc += separators[pick(separators.size())];
    }
    total += doc.size();
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace convoy::test
