//! `--report FILE.html`: one self-contained page (inline SVG, no script, no
//! external assets) with the run's latency distribution as an HDR
//! percentile curve and its throughput per second, so that two runs are
//! compared by looking. `--baseline EARLIER.html` draws an earlier report's
//! curves (read back from the data it embeds) beside this run's.

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use serde_json::{json, Value};

/// What a report shows of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Its label (scenario, URL, connections).
    pub label: String,
    /// (percentile 0–100, latency ms), from the histogram.
    pub percentiles: Vec<(f64, f64)>,
    /// Completed requests in each second of the run.
    pub per_second: Vec<u64>,
}

const MARK: &str = "<!-- mcp-load-data ";

impl Run {
    /// A run from its latency histogram (µs) and per-second counts.
    pub fn new(label: String, h: &Histogram<u64>, per_second: Vec<u64>) -> Self {
        let mut percentiles: Vec<(f64, f64)> = h
            .iter_quantiles(4)
            .map(|v| (v.quantile_iterated_to() * 100.0, v.value_iterated_to() as f64 / 1000.0))
            .filter(|(q, _)| *q < 99.9999)
            .collect();
        percentiles.dedup_by(|a, b| a.0 == b.0);
        if !h.is_empty() {
            percentiles.push((100.0, h.max() as f64 / 1000.0));
        }
        Run { label, percentiles, per_second }
    }

    fn to_json(&self) -> Value {
        json!({"label": self.label, "percentiles": self.percentiles, "per_second": self.per_second})
    }

    fn from_json(v: &Value) -> Option<Self> {
        let pairs = v["percentiles"].as_array()?;
        let percentiles = pairs.iter().filter_map(|p| Some((p[0].as_f64()?, p[1].as_f64()?))).collect();
        let per_second = v["per_second"].as_array()?.iter().filter_map(Value::as_u64).collect();
        Some(Run { label: v["label"].as_str()?.to_owned(), percentiles, per_second })
    }

    /// The run an earlier report embeds.
    pub fn read(html: &str) -> Option<Self> {
        let start = html.find(MARK)? + MARK.len();
        let end = start + html[start..].find(" -->")?;
        Run::from_json(&serde_json::from_str(&html[start..end]).ok()?)
    }
}

/// x of a percentile on the HDR scale: 0 at 0 %, 1 at 90 %, 2 at 99 %…
fn nines(p: f64) -> f64 {
    -(1.0 - (p / 100.0).min(0.999_999)).log10()
}

/// A tick value: two decimals below 100, whole numbers above.
fn num(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.0}")
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

const W: f64 = 640.0;
const H: f64 = 300.0;
const PAD: f64 = 48.0;
/// Room on the left for the value labels.
const LEFT: f64 = 76.0;
const COLORS: [&str; 2] = ["#1f6feb", "#d97706"];

fn polyline(points: &[(f64, f64)], color: &str) -> String {
    let pts: Vec<String> = points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    format!(r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#, pts.join(" "))
}

fn frame(title: &str, body: &str, x_ticks: &[(f64, String)], y_max: f64, y_unit: &str) -> String {
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">"#
    );
    let _ = write!(s, r#"<text x="{LEFT}" y="16" font-size="13" font-weight="bold">{}</text>"#, esc(title));
    let _ = write!(
        s,
        r##"<rect x="{LEFT}" y="{PAD}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        W - LEFT - PAD,
        H - 2.0 * PAD
    );
    for (x, label) in x_ticks {
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="{PAD}" x2="{x:.1}" y2="{}" stroke="#eee"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            H - PAD,
            H - PAD + 14.0,
            esc(label)
        );
    }
    for i in 0..=4 {
        let v = y_max * f64::from(i) / 4.0;
        let y = H - PAD - (H - 2.0 * PAD) * f64::from(i) / 4.0;
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{} {y_unit}</text>"##,
            W - PAD,
            LEFT - 4.0,
            y + 4.0,
            num(v)
        );
    }
    s.push_str(body);
    s.push_str("</svg>");
    s
}

/// The percentile curves of `runs` (latency by percentile, HDR scale).
fn percentile_chart(runs: &[&Run]) -> String {
    let top = 5.0; // up to 99.999 %
    let y_max = runs.iter().flat_map(|r| r.percentiles.iter().map(|p| p.1)).fold(0.0, f64::max).max(0.001) * 1.05;
    let sx = |p: f64| LEFT + (W - LEFT - PAD) * nines(p).min(top) / top;
    let sy = |v: f64| H - PAD - (H - 2.0 * PAD) * v / y_max;
    let ticks: Vec<(f64, String)> = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"]
        .iter()
        .enumerate()
        .map(|(i, l)| (sx(100.0 - 100.0 / 10f64.powi(i as i32)), l.to_string()))
        .collect();
    let body: String = runs
        .iter()
        .zip(COLORS)
        .map(|(r, c)| polyline(&r.percentiles.iter().map(|(p, v)| (sx(*p), sy(*v))).collect::<Vec<_>>(), c))
        .collect();
    frame("Latency by percentile (HDR)", &body, &ticks, y_max, "ms")
}

/// Requests per second over the run.
fn throughput_chart(runs: &[&Run]) -> String {
    let secs = runs.iter().map(|r| r.per_second.len()).max().unwrap_or(1).max(2);
    let y_max = runs.iter().flat_map(|r| r.per_second.iter().copied()).max().unwrap_or(1).max(1) as f64 * 1.1;
    let sx = |i: usize| LEFT + (W - LEFT - PAD) * (i as f64 + 0.5) / secs as f64;
    let sy = |v: f64| H - PAD - (H - 2.0 * PAD) * v / y_max;
    let step = (secs / 10).max(1);
    let ticks: Vec<(f64, String)> = (0..secs).step_by(step).map(|i| (sx(i), format!("{}s", i + 1))).collect();
    let body: String = runs
        .iter()
        .zip(COLORS)
        .map(|(r, c)| {
            polyline(&r.per_second.iter().enumerate().map(|(i, n)| (sx(i), sy(*n as f64))).collect::<Vec<_>>(), c)
        })
        .collect();
    frame("Throughput (requests per second)", &body, &ticks, y_max, "/s")
}

/// The page for `run`, beside `baseline` if given.
pub fn html(run: &Run, baseline: Option<&Run>) -> String {
    let runs: Vec<&Run> = std::iter::once(run).chain(baseline).collect();
    let legend: String = runs
        .iter()
        .zip(COLORS)
        .map(|(r, c)| format!(r#"<li><span style="color:{c}">&#9632;</span> {}</li>"#, esc(&r.label)))
        .collect();
    let table: String = runs
        .iter()
        .map(|r| {
            let at = |q: f64| r.percentiles.iter().find(|p| p.0 >= q).map_or(0.0, |p| p.1);
            let total: u64 = r.per_second.iter().sum();
            format!(
                "<tr><td>{}</td><td>{total}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td></tr>",
                esc(&r.label),
                at(50.0),
                at(90.0),
                at(99.0),
                r.percentiles.last().map_or(0.0, |p| p.1)
            )
        })
        .collect();
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>mcp-load report</title>\
         <style>body{{font-family:sans-serif;margin:24px}}td,th{{padding:2px 10px;text-align:right}}ul{{list-style:none;padding:0}}</style>\
         </head><body><h1>mcp-load</h1><ul>{legend}</ul>\
         <table><tr><th>run</th><th>requests</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>max ms</th></tr>{table}</table>\
         <p>{}</p><p>{}</p>{MARK}{} -->\n</body></html>\n",
        percentile_chart(&runs),
        throughput_chart(&runs),
        run.to_json()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_embeds_its_run_and_draws_both() {
        let mut h = crate::histogram();
        for v in 1..=1000u64 {
            h.record(v * 10).unwrap();
        }
        let run = Run::new("now".into(), &h, vec![400, 600]);
        assert_eq!(run.percentiles.last(), Some(&(100.0, h.max() as f64 / 1000.0)));
        assert!((run.percentiles.last().unwrap().1 - 10.0).abs() < 0.02);
        assert!(run.percentiles.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        let before = Run { label: "before <old>".into(), ..run.clone() };
        let page = html(&run, Some(&before));
        assert_eq!(Run::read(&page).as_ref(), Some(&run));
        assert_eq!(page.matches("<polyline").count(), 4, "two curves in each chart");
        assert!(page.contains("before &lt;old&gt;") && !page.contains("<script"));
    }
}
