// report.html's stylesheet, inlined in the page's <style> (the page loads nothing): the
// colour variables the SVG charts share (--c1..--c4, pass/warn/fail), cards, tables and the
// verdict badge.
#pragma once

namespace convoy::controller {

inline constexpr const char* kReportStyle = R"css(
:root{--fg:#1d2330;--muted:#5b6475;--bg:#f6f7f9;--card:#fff;--line:#dde1e8;
--pass:#1a7f37;--warn:#b26b00;--fail:#c62828;--c1:#2f6fde;--c2:#e0663a;--c3:#7b57c8;--c4:#2a9d5c}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1280px;margin:0 auto;padding:24px}
header.top{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:20px 24px}
h1{margin:0 0 8px;font-size:22px}
h2{font-size:18px;margin:0 0 12px}
h3{font-size:15px;margin:0 0 8px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:20px 24px;
margin-top:16px;overflow-x:auto}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0 0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.badge{display:inline-block;padding:2px 12px;border-radius:12px;color:#fff;font-weight:600;
text-transform:uppercase;letter-spacing:.04em}
.badge.pass{background:var(--pass)}.badge.warn{background:var(--warn)}
.badge.fail{background:var(--fail)}.badge.unknown{background:var(--muted)}
.verdict{margin-top:14px;padding:12px 16px;border-radius:6px;border-left:4px solid var(--muted);
background:var(--bg)}
.verdict.pass{border-color:var(--pass)}.verdict.warn{border-color:var(--warn)}
.verdict.fail{border-color:var(--fail)}
.verdict ul{margin:8px 0 0;padding-left:20px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:16px}
.card{border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:140px}
.card .v{font-size:20px;font-weight:600}.card .k{color:var(--muted);font-size:12px}
table{border-collapse:collapse;width:100%}
th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:right;
font-variant-numeric:tabular-nums;vertical-align:top}
th{background:var(--bg);font-weight:600;overflow-wrap:normal;word-break:normal}
td.reasons{min-width:12em}
th:first-child,td:first-child,td.text,th.text{text-align:left}
td.text{overflow-wrap:normal;word-break:normal}
.charts{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;flex:1 1 560px;max-width:620px}
figcaption{font-weight:600;margin-bottom:4px}
svg.chart{width:100%;height:auto;display:block}
.grid{stroke:#eceef2;stroke-width:1}.axis{stroke:#9aa3b2;stroke-width:1}
.tick{fill:var(--muted);font-size:11px}.axis-label{fill:var(--muted);font-size:12px}
.legend{fill:var(--fg);font-size:11px}
.bar,.swatch.s1{fill:var(--c1)}.bar.s2,.swatch.s2{fill:var(--c2)}
.swatch.s3{fill:var(--c3)}.swatch.s4{fill:var(--c4)}
.line{fill:none;stroke-width:1.8;stroke-linejoin:round}
.line.s1{stroke:var(--c1)}.line.s2{stroke:var(--c2)}.line.s3{stroke:var(--c3)}
.line.s4{stroke:var(--c4)}
.dot.s1{fill:var(--c1)}.dot.s2{fill:var(--c2)}.dot.s3{fill:var(--c3)}.dot.s4{fill:var(--c4)}
.empty{color:var(--muted);font-style:italic}
.stage-mark line{stroke:#8a93a6;stroke-width:1;stroke-dasharray:4 3}
.stage-mark text{fill:var(--muted);font-size:10px}
.slo-line line{stroke:var(--fail);stroke-width:1.2;stroke-dasharray:6 4}
.slo-line text,.point-label{fill:var(--fg);font-size:10px}
.dot.met{fill:var(--pass)}.dot.missed{fill:var(--fail)}
.swatch.met{fill:var(--pass)}.swatch.missed{fill:var(--fail)}
.answer{margin-top:14px;padding:12px 16px;border-radius:6px;background:var(--bg);
border-left:4px solid var(--c1)}
.answer dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}
.answer dt{color:var(--muted)}.answer dd{margin:0}
.cause{margin-top:10px;padding:10px 14px;border-radius:6px;border-left:4px solid var(--fail);
background:#fdf0f0}
.cause p{margin:4px 0}
details.zero-series summary{cursor:pointer;color:var(--muted)}
#server h3{margin:18px 0 8px}
.badge.small{padding:0 8px;font-size:11px}
.insight{border:1px solid var(--line);border-left:4px solid var(--warn);border-radius:6px;
padding:12px 16px;margin-bottom:12px}
.insight.error,.insight.critical{border-left-color:var(--fail)}
.insight.info{border-left-color:var(--c1)}
.insight ul{margin:2px 0 6px;padding-left:20px}
.insight h4{margin:8px 0 0;font-size:13px}
.insight p{margin:4px 0}
.muted{color:var(--muted)}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
nav{margin-top:12px}nav a{margin-right:14px;color:var(--c1);text-decoration:none}
footer{color:var(--muted);text-align:center;margin:24px 0 8px;font-size:12px}
)css";

}  // namespace convoy::controller
