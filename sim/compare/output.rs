//! Writing a comparison into a results directory:
//!
//! - `results.json`: the whole [`Comparison`] (groups and every run);
//! - `results.csv`: one row per run, hand-written with RFC 4180 quoting
//!   (a run that panicked has its message and replay line and no metrics);
//! - SVG charts (plotters' SVG backend, rendered into a string, so the bytes
//!   depend only on the data): per algorithm without `--vary`, along the axis
//!   with it;
//! - `README.md`: how to regenerate, what was run, a table, the charts, an
//!   automatic reading and optional hand-written notes.
//!
//! Everything is deterministic: no wall clock, fixed number formatting,
//! fixed colours per algorithm name, `Vec`/`BTreeMap` iteration only.

use super::{Comparison, Group, Stat, METRICS};
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::io;
use std::path::{Path, PathBuf};

/// Chart width in pixels (the legend column included).
const WIDTH: u32 = 860;
/// Height of one panel; charts with two panels stack them vertically.
const PANEL_HEIGHT: u32 = 430;
/// The legend column on the right.
const LEGEND_WIDTH: u32 = 180;
const FONT: &str = "sans-serif";

type DrawResult = Result<(), Box<dyn std::error::Error>>;
/// One value per category or axis position (`None`: no data).
type Values = Vec<Option<f64>>;
/// Reads one number from a group (`None`: no group or no samples).
type Getter<'a> = &'a dyn Fn(Option<&Group>) -> Option<f64>;
/// An algorithm name and a value.
type Named<'a> = (&'a str, f64);
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Writes the results directory (creating it if needed) and returns the
/// files written, in a fixed order: `results.json`, `results.csv`, the
/// charts, `README.md`.
pub fn write(c: &Comparison, dir: &Path, notes: Option<&str>) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut files = Vec::new();
    let mut put = |name: &str, contents: &str| -> io::Result<()> {
        let path = dir.join(name);
        std::fs::write(&path, contents)?;
        files.push(path);
        Ok(())
    };
    let mut json = serde_json::to_string_pretty(c).map_err(io::Error::other)?;
    json.push('\n');
    put("results.json", &json)?;
    put("results.csv", &csv(c))?;
    let charts = charts(c);
    for chart in &charts {
        put(&chart.file, &render(chart)?)?;
    }
    put("README.md", &readme(c, &charts, notes))?;
    Ok(files)
}

/// The fixed colour of an algorithm (a categorical palette); unknown names
/// get one of a few spare colours, chosen by a fixed hash of the name.
pub fn colour(algorithm: &str) -> RGBColor {
    if let Some(a) = crate::scenario::Algorithm::from_name(algorithm) {
        let (r, g, b) = a.info().colour;
        return RGBColor(r, g, b);
    }
    let spare = [
        RGBColor(227, 119, 194),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    let h = algorithm
        .bytes()
        .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
    spare[h % spare.len()]
}

// ---------------------------------------------------------------------------
// Looking things up

/// The algorithms in report order: `c.algorithms`, then any other name that
/// appears in the groups (defensive: they should agree).
fn algorithms(c: &Comparison) -> Vec<String> {
    let mut out = c.algorithms.clone();
    for g in &c.groups {
        if !out.contains(&g.algorithm) {
            out.push(g.algorithm.clone());
        }
    }
    out
}

/// The group of `algorithm` at axis value `value` (`None`: not varying).
fn group<'a>(c: &'a Comparison, algorithm: &str, value: Option<&str>) -> Option<&'a Group> {
    c.groups
        .iter()
        .find(|g| g.algorithm == algorithm && (value.is_none() || g.vary.as_deref() == value))
}

/// A metric of a group, if it has any samples.
fn stat(g: Option<&Group>, key: &str) -> Option<Stat> {
    g.and_then(|g| g.metrics.get(key))
        .copied()
        .filter(|s| s.n > 0)
}

fn p50(g: Option<&Group>, key: &str) -> Option<f64> {
    stat(g, key).map(|s| s.p50).filter(|v| v.is_finite())
}

fn p99(g: Option<&Group>, key: &str) -> Option<f64> {
    stat(g, key).map(|s| s.p99).filter(|v| v.is_finite())
}

fn max(g: Option<&Group>, key: &str) -> Option<f64> {
    stat(g, key).map(|s| s.max).filter(|v| v.is_finite())
}

// ---------------------------------------------------------------------------
// Number formatting (fixed, so files are byte-for-byte reproducible)

/// About three significant digits, no exponent.
fn num(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "-".to_string()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Compact labels for axes and bars: `1.5k`, `120k`, `3.2M`.
fn short(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "-".to_string()
    } else if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else if a == 0.0 {
        "0".to_string()
    } else if a >= 0.01 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.3}")
    } else {
        format!("{v:.0e}")
    }
}

/// A duration given in milliseconds, for prose.
fn dur(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// A size given in KiB, for prose.
fn size(kib: f64) -> String {
    if kib >= 1024.0 {
        format!("{:.1} MiB", kib / 1024.0)
    } else if kib >= 10.0 {
        format!("{kib:.0} KiB")
    } else {
        format!("{kib:.1} KiB")
    }
}

fn rate(rps: f64) -> String {
    format!("{rps:.0} rec/s")
}

fn count(v: f64) -> String {
    format!("{v:.0}")
}

/// `×15`, `×2.5`, `×0.40`.
fn ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("×{r:.0}")
    } else if r >= 1.0 {
        format!("×{r:.1}")
    } else {
        format!("×{r:.2}")
    }
}

fn or_dash(v: Option<f64>, f: fn(f64) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

// ---------------------------------------------------------------------------
// results.csv

/// One CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// p50 and p99 of one run's per-checkpoint values, scaled.
fn run_stat(values: &[u64], scale: f64) -> Stat {
    let v: Vec<f64> = values.iter().map(|&x| x as f64 / scale).collect();
    Stat::of(&v)
}

fn cell(s: Stat, f: fn(&Stat) -> f64) -> String {
    if s.n == 0 {
        String::new()
    } else {
        format!("{:.3}", f(&s))
    }
}

fn csv(c: &Comparison) -> String {
    let mut header: Vec<String> = vec!["algorithm".to_string()];
    if let Some(v) = &c.vary {
        header.push(v.key.clone());
    }
    header.extend(
        [
            "seed",
            "passed",
            "guarantee",
            "checkpoints_completed",
            "checkpoints_aborted",
            "duration_p50_ms",
            "duration_p99_ms",
            "alignment_p50_ms",
            "alignment_p99_ms",
            "state_kib_p50",
            "in_flight_kib_p50",
            "throughput_rps",
            "latency_p50_ms",
            "latency_p99_ms",
            "recovery_p50_ms",
            "records_replayed",
            "virtual_time_ms",
            "failed_checks",
            "panic",
            "replay",
        ]
        .map(String::from),
    );
    let mut out = String::new();
    let mut line = |fields: &[String]| {
        let fields: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    };
    line(&header);
    let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
    for r in &c.runs {
        let mut row = vec![r.algorithm.clone()];
        if c.vary.is_some() {
            row.push(r.vary.clone().unwrap_or_default());
        }
        let duration = run_stat(&r.duration_ns, 1e6);
        let alignment = run_stat(&r.alignment_ns, 1e6);
        // Latency 0 means nothing was committed (as in the group metrics).
        let latency = |ns: u64| if ns > 0 { ms(ns) } else { String::new() };
        row.extend([
            r.seed.to_string(),
            r.passed.to_string(),
            r.guarantee.clone(),
        ]);
        let metrics = [
            r.checkpoints_completed.to_string(),
            r.checkpoints_aborted.to_string(),
            cell(duration, |s| s.p50),
            cell(duration, |s| s.p99),
            cell(alignment, |s| s.p50),
            cell(alignment, |s| s.p99),
            cell(run_stat(&r.state_bytes, 1024.0), |s| s.p50),
            cell(run_stat(&r.in_flight_bytes, 1024.0), |s| s.p50),
            format!("{:.3}", r.throughput_rps),
            latency(r.latency_p50_ns),
            latency(r.latency_p99_ns),
            cell(run_stat(&r.recovery_ns, 1e6), |s| s.p50),
            r.records_replayed.to_string(),
            ms(r.virtual_time_ns),
        ];
        // A run that panicked measured nothing: empty cells, not zeros.
        row.extend(
            metrics
                .into_iter()
                .map(|m| if r.panic.is_some() { String::new() } else { m }),
        );
        row.extend([
            r.failed_checks.join(" "),
            r.panic.as_ref().map(|p| p.to_string()).unwrap_or_default(),
            r.replay.clone().unwrap_or_default(),
        ]);
        line(&row);
    }
    out
}

// ---------------------------------------------------------------------------
// Chart descriptions (data only; drawn by `render`)

/// One category per algorithm, a few bars each (side by side or stacked).
struct BarPanel {
    title: String,
    y_desc: String,
    /// Per algorithm, the values of its bars (`None`: no data).
    bars: Vec<(String, Values)>,
    stacked: bool,
}

/// One box per algorithm: whisker min–max, box p50–p99, tick at p50.
struct BoxPanel {
    title: String,
    y_desc: String,
    boxes: Vec<(String, Option<Stat>)>,
}

/// Lines along the axis values, one (solid, optionally dashed) per algorithm.
struct LinePanel {
    title: String,
    y_desc: String,
    x_desc: String,
    x_labels: Vec<String>,
    /// Per algorithm: the solid series and the dashed series (empty if
    /// none), one value per axis value.
    series: Vec<(String, Values, Values)>,
}

enum Panel {
    Bars(BarPanel),
    Box(BoxPanel),
    Lines(LinePanel),
}

impl Panel {
    /// Whether `algorithm` has anything drawn in this panel.
    fn has(&self, algorithm: &str) -> bool {
        match self {
            Panel::Bars(p) => p
                .bars
                .iter()
                .any(|(a, v)| a == algorithm && v.iter().any(Option::is_some)),
            Panel::Box(p) => p.boxes.iter().any(|(a, s)| a == algorithm && s.is_some()),
            Panel::Lines(p) => p
                .series
                .iter()
                .any(|(a, s, d)| a == algorithm && s.iter().chain(d).any(Option::is_some)),
        }
    }
}

/// How a legend key entry is drawn (in grey; it explains styles, not
/// algorithms).
enum Key {
    Solid,
    Light,
    Line,
    Dashed,
    Text,
}

/// One SVG file.
struct Chart {
    file: String,
    title: String,
    panels: Vec<Panel>,
    /// Legend entries per algorithm are drawn as lines (else boxes).
    lines: bool,
    algorithms: Vec<String>,
    key: Vec<(&'static str, Key)>,
}

fn charts(c: &Comparison) -> Vec<Chart> {
    match &c.vary {
        None => static_charts(c),
        Some(v) => vary_charts(c, &v.key, &v.values),
    }
}

fn static_charts(c: &Comparison) -> Vec<Chart> {
    let algs = algorithms(c);
    let groups: Vec<(String, Option<&Group>)> = algs
        .iter()
        .map(|a| (a.clone(), group(c, a, None)))
        .collect();
    // Bars per algorithm from a list of value getters.
    let bars = |title: &str, y_desc: &str, stacked: bool, f: &[Getter]| {
        Panel::Bars(BarPanel {
            title: title.to_string(),
            y_desc: y_desc.to_string(),
            bars: groups
                .iter()
                .map(|(a, g)| (a.clone(), f.iter().map(|f| f(*g)).collect()))
                .collect(),
            stacked,
        })
    };
    let chart =
        |file: &str, title: &str, panels: Vec<Panel>, key: Vec<(&'static str, Key)>| Chart {
            file: file.to_string(),
            title: title.to_string(),
            panels,
            lines: false,
            algorithms: algs.clone(),
            key,
        };
    vec![
        chart(
            "checkpoint-duration.svg",
            "Checkpoint duration",
            vec![Panel::Box(BoxPanel {
                title: "Checkpoint duration (per completed checkpoint, all seeds)".to_string(),
                y_desc: "ms".to_string(),
                boxes: groups
                    .iter()
                    .map(|(a, g)| (a.clone(), stat(*g, "checkpoint_duration_ms")))
                    .collect(),
            })],
            vec![
                ("box: p50 to p99", Key::Light),
                ("black bar: p50", Key::Text),
                ("whisker: min to max", Key::Text),
            ],
        ),
        chart(
            "alignment.svg",
            "Alignment",
            vec![bars(
                "Alignment, slowest task (per completed checkpoint)",
                "ms",
                false,
                &[&|g| p50(g, "alignment_ms"), &|g| p99(g, "alignment_ms")],
            )],
            vec![("p50", Key::Solid), ("p99", Key::Light)],
        ),
        chart(
            "checkpoint-size.svg",
            "Checkpoint size",
            vec![bars(
                "Checkpoint size: state + persisted in-flight data (p50)",
                "KiB",
                true,
                &[&|g| p50(g, "state_kib"), &|g| p50(g, "in_flight_kib")],
            )],
            vec![("state", Key::Solid), ("in-flight data", Key::Light)],
        ),
        chart(
            "throughput-latency.svg",
            "Throughput and latency",
            vec![
                bars(
                    "Throughput (median over seeds)",
                    "records / s",
                    false,
                    &[&|g| p50(g, "throughput_rps")],
                ),
                bars(
                    "End-to-end latency (median over seeds of each run's p50, p99)",
                    "ms",
                    false,
                    &[&|g| p50(g, "latency_p50_ms"), &|g| p50(g, "latency_p99_ms")],
                ),
            ],
            vec![("p50 / median", Key::Solid), ("p99", Key::Light)],
        ),
        chart(
            "recovery.svg",
            "Recovery",
            vec![
                bars(
                    "Recovery time (per failure: from the failure until every source partition is back at its pre-failure position)",
                    "ms",
                    false,
                    &[&|g| p50(g, "recovery_ms"), &|g| p99(g, "recovery_ms")],
                ),
                bars(
                    "Records replayed (median over seeds)",
                    "records",
                    false,
                    &[&|g| p50(g, "records_replayed")],
                ),
            ],
            vec![("p50 / median", Key::Solid), ("p99", Key::Light)],
        ),
    ]
}

fn vary_charts(c: &Comparison, key: &str, values: &[String]) -> Vec<Chart> {
    let algs = algorithms(c);
    // Along the axis, per algorithm: `f` of each axis value's group.
    let along = |f: Getter| -> Vec<Values> {
        algs.iter()
            .map(|a| values.iter().map(|v| f(group(c, a, Some(v)))).collect())
            .collect()
    };
    let chart = |file: &str,
                 title: &str,
                 y_desc: &str,
                 solid: Getter,
                 dashed: Option<Getter>,
                 key_text: Vec<(&'static str, Key)>| {
        let solid = along(solid);
        let dashed = dashed.map_or_else(|| vec![Vec::new(); algs.len()], along);
        Chart {
            file: file.to_string(),
            title: title.to_string(),
            panels: vec![Panel::Lines(LinePanel {
                title: title.to_string(),
                y_desc: y_desc.to_string(),
                x_desc: key.to_string(),
                x_labels: values.to_vec(),
                series: algs
                    .iter()
                    .zip(solid)
                    .zip(dashed)
                    .map(|((a, s), d)| (a.clone(), s, d))
                    .collect(),
            })],
            lines: true,
            algorithms: algs.clone(),
            key: key_text,
        }
    };
    let p50_p99 = || vec![("p50", Key::Line), ("p99", Key::Dashed)];
    let p50_only = || vec![("p50", Key::Line)];
    vec![
        chart(
            "vary-checkpoint-duration.svg",
            "Checkpoint duration (per completed checkpoint)",
            "ms",
            &|g| p50(g, "checkpoint_duration_ms"),
            Some(&|g| p99(g, "checkpoint_duration_ms")),
            p50_p99(),
        ),
        chart(
            "vary-alignment.svg",
            "Alignment, slowest task (per completed checkpoint)",
            "ms",
            &|g| p50(g, "alignment_ms"),
            Some(&|g| p99(g, "alignment_ms")),
            p50_p99(),
        ),
        chart(
            "vary-state-size.svg",
            "Operator state per checkpoint",
            "KiB",
            &|g| p50(g, "state_kib"),
            None,
            p50_only(),
        ),
        chart(
            "vary-in-flight-size.svg",
            "Persisted in-flight data per checkpoint",
            "KiB",
            &|g| p50(g, "in_flight_kib"),
            None,
            p50_only(),
        ),
        chart(
            "vary-throughput.svg",
            "Throughput (median over seeds)",
            "records / s",
            &|g| p50(g, "throughput_rps"),
            None,
            vec![("median", Key::Line)],
        ),
        chart(
            "vary-latency.svg",
            "End-to-end latency (median over seeds of each run's p50, p99)",
            "ms",
            &|g| p50(g, "latency_p50_ms"),
            Some(&|g| p50(g, "latency_p99_ms")),
            p50_p99(),
        ),
        chart(
            "vary-recovery.svg",
            "Recovery time (per failure)",
            "ms",
            &|g| p50(g, "recovery_ms"),
            Some(&|g| p99(g, "recovery_ms")),
            p50_p99(),
        ),
    ]
}

// ---------------------------------------------------------------------------
// Drawing

/// Renders a chart into an SVG string (the backend writes no timestamps, so
/// the bytes depend only on the data).
fn render(chart: &Chart) -> io::Result<String> {
    let height = PANEL_HEIGHT * chart.panels.len().max(1) as u32;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, height)).into_drawing_area();
        draw_chart(&root, chart)
            .and_then(|()| root.present().map_err(Into::into))
            .map_err(|e| io::Error::other(format!("{}: {e}", chart.file)))?;
    }
    Ok(buf)
}

fn draw_chart(root: &Area<'_>, chart: &Chart) -> DrawResult {
    root.fill(&WHITE)?;
    let (plot, legend) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
    let areas = plot.split_evenly((chart.panels.len().max(1), 1));
    for (area, panel) in areas.iter().zip(&chart.panels) {
        match panel {
            Panel::Bars(p) => draw_bars(area, p)?,
            Panel::Box(p) => draw_boxes(area, p)?,
            Panel::Lines(p) => draw_lines(area, p)?,
        }
    }
    draw_legend(&legend, chart)
}

fn text_style(size: u32, colour: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    (FONT, size).into_font().color(&colour).pos(Pos::new(h, v))
}

/// A panel without data: its title and "no data".
fn no_data(area: &Area<'_>, title: &str) -> DrawResult {
    let (w, h) = area.dim_in_pixel();
    let centre = (w / 2) as i32;
    area.draw(&Text::new(
        title.to_string(),
        (centre, 12),
        text_style(17, BLACK, HPos::Center, VPos::Top),
    ))?;
    area.draw(&Text::new(
        "no data",
        (centre, (h / 2) as i32),
        text_style(16, RGBColor(110, 110, 110), HPos::Center, VPos::Center),
    ))?;
    Ok(())
}

/// The y axis of a panel.
enum YScale {
    /// From 0 to the bound.
    Linear(f64),
    /// Between the bounds (both positive).
    Log(f64, f64),
}

/// Linear from 0 with headroom, or logarithmic when `allow_log` and the
/// positive values span more than 100× (so 2 ms and 900 ms both show).
/// `None` when there is nothing to draw.
fn y_scale(values: &[f64], allow_log: bool) -> Option<YScale> {
    let values: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if values.is_empty() {
        return None;
    }
    let hi = values.iter().copied().fold(0.0, f64::max);
    let lo = values
        .iter()
        .copied()
        .filter(|&v| v > 0.0)
        .fold(f64::INFINITY, f64::min);
    Some(if allow_log && lo.is_finite() && hi > 100.0 * lo {
        YScale::Log(lo / 2.0, hi * 3.0)
    } else if hi > 0.0 {
        YScale::Linear(hi * 1.15)
    } else {
        YScale::Linear(1.0)
    })
}

/// A categorical x axis: category `i` is centred on `i as f64`, with one
/// key point (label, tick) per category and no light grid lines; the mesh's
/// formatter turns positions into names.
struct XCoord {
    n: usize,
    linear: RangedCoordf64,
}

fn categories(n: usize) -> XCoord {
    let n = n.max(1);
    XCoord {
        n,
        linear: (-0.5..n as f64 - 0.5).into(),
    }
}

impl Ranged for XCoord {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.linear.map(value, limit)
    }
    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            (0..self.n).map(|i| i as f64).collect()
        }
    }
    fn range(&self) -> std::ops::Range<f64> {
        self.linear.range()
    }
}

fn chart_on<'a, 'b, Y>(
    area: &'a Area<'b>,
    title: &str,
    n: usize,
    y: Y,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<XCoord, Y>>, Box<dyn std::error::Error>>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    Ok(ChartBuilder::on(area)
        .caption(title, (FONT, 17))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(categories(n), y)?)
}

/// Axes and grid; x labels are `names` at their positions.
fn mesh<Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<XCoord, Y>>,
    names: &[String],
    x_desc: &str,
    y_desc: &str,
) -> DrawResult
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let x_label = |v: &f64| {
        let i = v.round();
        if i < 0.0 {
            String::new()
        } else {
            names.get(i as usize).cloned().unwrap_or_default()
        }
    };
    let y_label = |v: &f64| short(*v);
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .x_labels(names.len().max(1))
        .max_light_lines(4)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .y_desc(y_desc)
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(240, 240, 240));
    if !x_desc.is_empty() {
        mesh.x_desc(x_desc);
    }
    mesh.draw()?;
    Ok(())
}

/// Bar fill: the first bar of a category in the algorithm's colour, the
/// following ones lighter.
fn bar_fill(c: RGBColor, j: usize) -> ShapeStyle {
    match j {
        0 => c.filled(),
        1 => c.mix(0.4).filled(),
        _ => c.mix(0.2).filled(),
    }
}

fn draw_bars(area: &Area<'_>, p: &BarPanel) -> DrawResult {
    // The heights that must fit: every bar, or every stack.
    let heights: Vec<f64> = if p.stacked {
        p.bars
            .iter()
            .filter(|(_, v)| v.iter().any(Option::is_some))
            .map(|(_, v)| v.iter().flatten().sum())
            .collect()
    } else {
        p.bars
            .iter()
            .flat_map(|(_, v)| v.iter().flatten().copied())
            .collect()
    };
    // Stacks only read right on a linear axis.
    match y_scale(&heights, !p.stacked) {
        None => no_data(area, &p.title),
        Some(YScale::Linear(hi)) => bars_with(area, p, RangedCoordf64::from(0.0..hi)),
        Some(YScale::Log(lo, hi)) => bars_with(area, p, LogCoord::from((lo..hi).log_scale())),
    }
}

fn bars_with<Y>(area: &Area<'_>, p: &BarPanel, y: Y) -> DrawResult
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let range = y.range();
    let (floor, top) = (range.start, range.end);
    // Values outside the axis (0 on a log axis) sit on its edge.
    let fit = |v: f64| v.max(floor).min(top);
    let names: Vec<String> = p.bars.iter().map(|(a, _)| a.clone()).collect();
    let mut chart = chart_on(area, &p.title, names.len(), y)?;
    mesh(&mut chart, &names, "", &p.y_desc)?;
    let label = text_style(11, BLACK, HPos::Center, VPos::Bottom);
    for (i, (alg, values)) in p.bars.iter().enumerate() {
        let c = colour(alg);
        let x = i as f64;
        let mut rects = Vec::new();
        let mut labels = Vec::new();
        if p.stacked {
            let mut base = 0.0;
            for (j, v) in values.iter().enumerate() {
                if let Some(v) = *v {
                    let span = [(x - 0.25, fit(base)), (x + 0.25, fit(base + v))];
                    rects.push(Rectangle::new(span, bar_fill(c, j)));
                    rects.push(Rectangle::new(span, c.stroke_width(1)));
                    base += v;
                }
            }
            if values.iter().any(Option::is_some) {
                labels.push((x, fit(base), short(base)));
            }
        } else {
            let w = 0.7 / values.len().max(1) as f64;
            for (j, v) in values.iter().enumerate() {
                if let Some(v) = *v {
                    let x0 = x - 0.35 + j as f64 * w;
                    let span = [(x0, floor), (x0 + w * 0.92, fit(v))];
                    rects.push(Rectangle::new(span, bar_fill(c, j)));
                    rects.push(Rectangle::new(span, c.stroke_width(1)));
                    labels.push((x0 + w * 0.46, fit(v), short(v)));
                }
            }
        }
        chart.draw_series(rects)?;
        chart.draw_series(
            labels
                .into_iter()
                .map(|(x, y, s)| Text::new(s, (x, y), label.clone())),
        )?;
    }
    Ok(())
}

fn draw_boxes(area: &Area<'_>, p: &BoxPanel) -> DrawResult {
    let values: Vec<f64> = p
        .boxes
        .iter()
        .filter_map(|(_, s)| *s)
        .flat_map(|s| [s.min, s.p50, s.p99, s.max])
        .collect();
    match y_scale(&values, true) {
        None => no_data(area, &p.title),
        Some(YScale::Linear(hi)) => boxes_with(area, p, RangedCoordf64::from(0.0..hi)),
        Some(YScale::Log(lo, hi)) => boxes_with(area, p, LogCoord::from((lo..hi).log_scale())),
    }
}

fn boxes_with<Y>(area: &Area<'_>, p: &BoxPanel, y: Y) -> DrawResult
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let range = y.range();
    let (floor, top) = (range.start, range.end);
    let fit = |v: f64| v.max(floor).min(top);
    let names: Vec<String> = p.boxes.iter().map(|(a, _)| a.clone()).collect();
    let mut chart = chart_on(area, &p.title, names.len(), y)?;
    mesh(&mut chart, &names, "", &p.y_desc)?;
    let label = text_style(11, BLACK, HPos::Left, VPos::Center);
    for (i, (alg, s)) in p.boxes.iter().enumerate() {
        let Some(s) = s else { continue };
        let c = colour(alg);
        let x = i as f64;
        let (lo, mid, hi, top_) = (fit(s.min), fit(s.p50), fit(s.p99), fit(s.max));
        let hline = |y: f64, half: f64| vec![(x - half, y), (x + half, y)];
        chart.draw_series([
            PathElement::new(vec![(x, lo), (x, top_)], c.stroke_width(2)),
            PathElement::new(hline(lo, 0.08), c.stroke_width(2)),
            PathElement::new(hline(top_, 0.08), c.stroke_width(2)),
        ])?;
        let span = [(x - 0.22, mid), (x + 0.22, hi)];
        chart.draw_series([
            Rectangle::new(span, c.mix(0.45).filled()),
            Rectangle::new(span, c.stroke_width(1)),
        ])?;
        chart.draw_series([PathElement::new(hline(mid, 0.22), BLACK.stroke_width(3))])?;
        chart.draw_series([Text::new(short(s.p50), (x + 0.25, mid), label.clone())])?;
    }
    Ok(())
}

fn draw_lines(area: &Area<'_>, p: &LinePanel) -> DrawResult {
    let values: Vec<f64> = p
        .series
        .iter()
        .flat_map(|(_, s, d)| s.iter().chain(d).flatten().copied())
        .collect();
    match y_scale(&values, true) {
        None => no_data(area, &p.title),
        Some(YScale::Linear(hi)) => lines_with(area, p, RangedCoordf64::from(0.0..hi)),
        Some(YScale::Log(lo, hi)) => lines_with(area, p, LogCoord::from((lo..hi).log_scale())),
    }
}

/// The unbroken stretches of a series (a missing value breaks the line).
fn stretches(values: &[Option<f64>], fit: impl Fn(f64) -> f64) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current = Vec::new();
    for (i, v) in values.iter().enumerate() {
        match v {
            Some(v) => current.push((i as f64, fit(*v))),
            None if !current.is_empty() => out.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn lines_with<Y>(area: &Area<'_>, p: &LinePanel, y: Y) -> DrawResult
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let range = y.range();
    let (floor, top) = (range.start, range.end);
    let fit = |v: f64| v.max(floor).min(top);
    let mut chart = chart_on(area, &p.title, p.x_labels.len(), y)?;
    mesh(&mut chart, &p.x_labels, &p.x_desc, &p.y_desc)?;
    for (alg, solid, dashed) in &p.series {
        let c = colour(alg);
        for run in stretches(solid, fit) {
            chart.draw_series(LineSeries::new(run.clone(), c.stroke_width(2)))?;
            chart.draw_series(run.into_iter().map(|pt| Circle::new(pt, 4, c.filled())))?;
        }
        for run in stretches(dashed, fit) {
            chart.draw_series(DashedLineSeries::new(run.clone(), 6, 4, c.stroke_width(2)))?;
            chart.draw_series(
                run.into_iter()
                    .map(|pt| Circle::new(pt, 3, c.stroke_width(2))),
            )?;
        }
    }
    Ok(())
}

/// The legend column: one entry per algorithm in its colour ("no data"
/// under those with nothing drawn), then the style key in grey.
fn draw_legend(area: &Area<'_>, chart: &Chart) -> DrawResult {
    let grey = RGBColor(110, 110, 110);
    let name_style = text_style(13, BLACK, HPos::Left, VPos::Center);
    let note_style = text_style(11, grey, HPos::Left, VPos::Center);
    let mut y = 48;
    area.draw(&Text::new(
        "algorithm",
        (10, y),
        text_style(13, grey, HPos::Left, VPos::Center),
    ))?;
    y += 22;
    for alg in &chart.algorithms {
        let c = colour(alg);
        if chart.lines {
            area.draw(&PathElement::new(vec![(8, y), (30, y)], c.stroke_width(2)))?;
            area.draw(&Circle::new((19, y), 4, c.filled()))?;
        } else {
            area.draw(&Rectangle::new([(10, y - 6), (28, y + 6)], c.filled()))?;
        }
        area.draw(&Text::new(alg.clone(), (36, y), name_style.clone()))?;
        if !chart.panels.iter().any(|p| p.has(alg)) {
            y += 15;
            area.draw(&Text::new("no data", (36, y), note_style.clone()))?;
        }
        y += 22;
    }
    y += 10;
    for (text, key) in &chart.key {
        match key {
            Key::Solid => area.draw(&Rectangle::new([(10, y - 6), (28, y + 6)], grey.filled()))?,
            Key::Light => {
                area.draw(&Rectangle::new(
                    [(10, y - 6), (28, y + 6)],
                    grey.mix(0.4).filled(),
                ))?;
                area.draw(&Rectangle::new(
                    [(10, y - 6), (28, y + 6)],
                    grey.stroke_width(1),
                ))?;
            }
            Key::Line => area.draw(&PathElement::new(
                vec![(8, y), (30, y)],
                grey.stroke_width(2),
            ))?,
            Key::Dashed => {
                for x in [8, 17, 26] {
                    area.draw(&PathElement::new(
                        vec![(x, y), (x + 5, y)],
                        grey.stroke_width(2),
                    ))?;
                }
            }
            Key::Text => {}
        }
        area.draw(&Text::new(*text, (36, y), note_style.clone()))?;
        y += 20;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// README.md

/// A table cell: `|` escaped, so names and values cannot break the table.
fn md(s: &str) -> String {
    s.replace('|', "\\|")
}

fn readme(c: &Comparison, charts: &[Chart], notes: Option<&str>) -> String {
    let mut out = String::new();
    let mut line = |s: &str| {
        out.push_str(s);
        out.push('\n');
    };
    line(&format!("# Comparison: {}", c.scenario));
    line("");
    line("## Regenerate");
    line("");
    line("```sh");
    line(&c.command);
    line("```");
    line("");
    line("## What was run");
    line("");
    line(&format!("- Scenario: `{}`", c.scenario));
    line(&format!("- Algorithms: {}", c.algorithms.join(", ")));
    line(&format!(
        "- Seeds: `{}` (the same inputs and crash times for every algorithm)",
        c.seeds
    ));
    match &c.vary {
        Some(v) => line(&format!("- Axis: `{}` = {}", v.key, v.values.join(", "))),
        None => line("- Axis: none"),
    }
    if !c.mutants.is_empty() {
        line(&format!("- Mutants: {}", c.mutants.join(", ")));
    }
    let failed = c.runs.iter().filter(|r| !r.passed).count();
    let panicked = c.runs.iter().filter(|r| r.panic.is_some()).count();
    if panicked == 0 {
        line(&format!(
            "- Runs: {} ({} failed their checks)",
            c.runs.len(),
            failed
        ));
    } else {
        line(&format!(
            "- Runs: {} ({} failed their checks, {panicked} panicked)",
            c.runs.len(),
            failed - panicked
        ));
    }
    line("");
    line("## Results");
    line("");
    let vary_col = c.vary.as_ref().map(|v| format!(" `{}` |", md(&v.key)));
    line(&format!(
        "| algorithm |{} checkpoints p50 | duration p50 ms | duration p99 ms | alignment p50 ms | state KiB p50 | in-flight KiB p50 | throughput p50 rec/s | latency p50 ms | latency p99 ms | recovery p50 ms | replayed p50 | failed runs |",
        vary_col.clone().unwrap_or_default()
    ));
    line(&format!(
        "|---|{}---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        if vary_col.is_some() { "---|" } else { "" }
    ));
    for g in &c.groups {
        let g_ = Some(g);
        let value = if c.vary.is_some() {
            format!(" {} |", md(g.vary.as_deref().unwrap_or("")))
        } else {
            String::new()
        };
        line(&format!(
            "| {} |{} {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {}/{} |",
            md(&g.algorithm),
            value,
            or_dash(p50(g_, "checkpoints_completed"), count),
            or_dash(p50(g_, "checkpoint_duration_ms"), num),
            or_dash(p99(g_, "checkpoint_duration_ms"), num),
            or_dash(p50(g_, "alignment_ms"), num),
            or_dash(p50(g_, "state_kib"), num),
            or_dash(p50(g_, "in_flight_kib"), num),
            or_dash(p50(g_, "throughput_rps"), count),
            or_dash(p50(g_, "latency_p50_ms"), num),
            or_dash(p50(g_, "latency_p99_ms"), num),
            or_dash(p50(g_, "recovery_ms"), num),
            or_dash(p50(g_, "records_replayed"), count),
            g.failed_runs,
            g.runs,
        ));
    }
    line("");
    line("Per-checkpoint metrics (duration, alignment, sizes) and recovery are pooled over all seeds; per-run metrics (checkpoints, throughput, latency, replayed) are medians over seeds. `-`: no data (e.g. no completed checkpoint, nothing committed, no failure).");
    line("");
    for (key, description) in METRICS {
        line(&format!("- `{key}`: {description}"));
    }
    line("");
    let failures: Vec<_> = c.runs.iter().filter(|r| !r.passed).collect();
    if !failures.is_empty() {
        line("## Failed runs");
        line("");
        line("Each with its replay line. A run that panicked (a bug of ckptsim itself) is left out of every metric above.");
        line("");
        for r in failures {
            let at = r
                .vary
                .as_ref()
                .map(|v| format!(", {} = {}", c.vary.as_ref().map_or("", |x| &x.key), v))
                .unwrap_or_default();
            let what = match &r.panic {
                Some(p) => format!("panic: {p}"),
                None => format!("failed {}", r.failed_checks.join(", ")),
            };
            line(&format!(
                "- {}, seed {}{at}: {}",
                r.algorithm,
                r.seed,
                md(&what)
            ));
            if let Some(replay) = &r.replay {
                line(&format!("  `{replay}`"));
            }
        }
        line("");
    }
    line("## Charts");
    line("");
    for ch in charts {
        line(&format!("![{}]({})", ch.title, ch.file));
        line("");
    }
    line("## Reading");
    line("");
    for l in reading(c) {
        line(&l);
    }
    if let Some(notes) = notes {
        line("");
        line("## Notes");
        line("");
        out.push_str(notes);
        if !notes.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The automatic reading, as Markdown lines.
fn reading(c: &Comparison) -> Vec<String> {
    let algs = algorithms(c);
    let mut out = Vec::new();
    match &c.vary {
        None => {
            let groups: Vec<(String, Option<&Group>)> = algs
                .iter()
                .map(|a| (a.clone(), group(c, a, None)))
                .collect();
            out.extend(reading_at(&groups));
        }
        Some(v) => {
            let (Some(first), Some(last)) = (v.values.first(), v.values.last()) else {
                out.push("- The axis has no values.".to_string());
                return out;
            };
            out.push(format!(
                "Along `{}`, from {first} to {last} (medians):",
                v.key
            ));
            out.push(String::new());
            for a in &algs {
                let (g0, g1) = (group(c, a, Some(first)), group(c, a, Some(last)));
                let change = |key: &str, f: fn(f64) -> String| {
                    let (x, y) = (p50(g0, key), p50(g1, key));
                    let mut s = format!("{} → {}", or_dash(x, f), or_dash(y, f));
                    match (x, y) {
                        (Some(x), Some(y)) if x > 0.0 => {
                            s.push_str(&format!(" ({})", ratio(y / x)))
                        }
                        _ => {}
                    }
                    s
                };
                out.push(format!(
                    "- {a}: duration {}; in-flight {}; throughput {}",
                    change("checkpoint_duration_ms", dur),
                    change("in_flight_kib", size),
                    change("throughput_rps", rate),
                ));
            }
            for value in if first == last {
                vec![first]
            } else {
                vec![first, last]
            } {
                out.push(String::new());
                out.push(format!("At `{}` = {value}:", v.key));
                out.push(String::new());
                let groups: Vec<(String, Option<&Group>)> = algs
                    .iter()
                    .map(|a| (a.clone(), group(c, a, Some(value))))
                    .collect();
                out.extend(reading_at(&groups));
            }
        }
    }
    out
}

/// The lowest and the highest of `(algorithm, value)` (first on ties).
fn extremes<'a>(values: &[Named<'a>]) -> Option<(Named<'a>, Named<'a>)> {
    let first = *values.first()?;
    let (mut lo, mut hi) = (first, first);
    for &(a, v) in values {
        if v < lo.1 {
            lo = (a, v);
        }
        if v > hi.1 {
            hi = (a, v);
        }
    }
    Some((lo, hi))
}

/// "lowest X (a), highest Y (b): ×r" over the algorithms with data.
fn lowest_highest(what: &str, values: &[(&str, f64)], f: fn(f64) -> String) -> Option<String> {
    let ((lo_a, lo), (hi_a, hi)) = extremes(values)?;
    if values.len() == 1 {
        return Some(format!("- {what}: only {lo_a} has data ({}).", f(lo)));
    }
    if lo == hi {
        return Some(format!(
            "- {what}: {} for every algorithm with data.",
            f(lo)
        ));
    }
    let mut s = format!(
        "- {what}: lowest **{lo_a}** ({}), highest **{hi_a}** ({})",
        f(lo),
        f(hi)
    );
    if lo > 0.0 {
        s.push_str(&format!(", {} apart", ratio(hi / lo)));
    }
    s.push('.');
    Some(s)
}

/// The reading for one set of groups (one per algorithm).
fn reading_at(groups: &[(String, Option<&Group>)]) -> Vec<String> {
    let mut out = Vec::new();
    let values = |key: &str| -> Vec<(&str, f64)> {
        groups
            .iter()
            .filter_map(|(a, g)| p50(*g, key).map(|v| (a.as_str(), v)))
            .collect()
    };
    let durations = values("checkpoint_duration_ms");
    match lowest_highest("Median checkpoint duration", &durations, dur) {
        Some(s) => out.push(s),
        None => out.push("- No algorithm completed a checkpoint.".to_string()),
    }
    let without: Vec<&str> = groups
        .iter()
        .filter(|(_, g)| p50(*g, "checkpoint_duration_ms").is_none())
        .map(|(a, _)| a.as_str())
        .collect();
    if !without.is_empty() && !durations.is_empty() {
        out.push(format!(
            "- No completed checkpoints: {}.",
            without.join(", ")
        ));
    }
    // In-flight data: whoever persisted any, with the median and the max.
    let persisted: Vec<String> = groups
        .iter()
        .filter_map(|(a, g)| {
            let m = max(*g, "in_flight_kib").filter(|&m| m > 0.0)?;
            let median = p50(*g, "in_flight_kib").unwrap_or(0.0);
            Some(format!("{a} (median {}, max {})", size(median), size(m)))
        })
        .collect();
    if persisted.is_empty() {
        if !durations.is_empty() {
            out.push("- No algorithm persisted in-flight data.".to_string());
        }
    } else {
        out.push(format!(
            "- Persists in-flight data: {}.",
            persisted.join(", ")
        ));
    }
    // Throughput relative to the best.
    let throughput = values("throughput_rps");
    if let Some((_, (best_a, best))) = extremes(&throughput) {
        if best > 0.0 && throughput.len() > 1 {
            out.push(format!(
                "- Throughput (median over seeds) relative to the best, **{best_a}** ({}):",
                rate(best)
            ));
            for &(a, v) in &throughput {
                if a != best_a {
                    out.push(format!(
                        "  - {a}: {:.0}% of {best_a} ({})",
                        v / best * 100.0,
                        rate(v)
                    ));
                }
            }
        }
    }
    if let Some(s) = lowest_highest("End-to-end latency p99", &values("latency_p99_ms"), dur) {
        out.push(s);
    }
    if let Some(s) = lowest_highest("Median recovery time", &values("recovery_ms"), dur) {
        out.push(s);
    }
    let failing: Vec<String> = groups
        .iter()
        .filter_map(|(a, g)| {
            g.filter(|g| g.failed_runs > g.panicked_runs)
                .map(|g| (a, g))
        })
        .map(|(a, g)| format!("{a} ({} of {})", g.failed_runs - g.panicked_runs, g.runs))
        .collect();
    let panicking: Vec<String> = groups
        .iter()
        .filter_map(|(a, g)| g.filter(|g| g.panicked_runs > 0).map(|g| (a, g)))
        .map(|(a, g)| format!("{a} ({} of {})", g.panicked_runs, g.runs))
        .collect();
    if failing.is_empty() && panicking.is_empty() {
        out.push("- Every run passed its guarantee checks.".to_string());
    }
    if !failing.is_empty() {
        out.push(format!(
            "- Runs that failed their guarantee checks: {}.",
            failing.join(", ")
        ));
    }
    if !panicking.is_empty() {
        out.push(format!(
            "- Runs that panicked (bugs of ckptsim itself, left out of the metrics): {}.",
            panicking.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{group as aggregate, Comparison, RunMetrics, Vary};
    use super::*;

    #[allow(clippy::too_many_arguments)]
    fn run(
        algorithm: &str,
        seed: u64,
        vary: Option<&str>,
        duration_ms: &[u64],
        alignment_ms: &[u64],
        in_flight_kib: &[u64],
        throughput: f64,
        recovery_ms: &[u64],
    ) -> RunMetrics {
        let n = duration_ms.len();
        let passed = seed != 2 || algorithm != "aligned";
        RunMetrics {
            algorithm: algorithm.to_string(),
            seed,
            vary: vary.map(String::from),
            passed,
            guarantee: "exactly-once".to_string(),
            checkpoints_completed: n as u64,
            checkpoints_aborted: 0,
            duration_ns: duration_ms.iter().map(|v| v * 1_000_000).collect(),
            alignment_ns: alignment_ms.iter().map(|v| v * 1_000_000).collect(),
            start_delay_ns: vec![1_000; n],
            state_bytes: vec![64 * 1024; n],
            in_flight_bytes: in_flight_kib.iter().map(|v| v * 1024).collect(),
            throughput_rps: throughput,
            latency_p50_ns: if throughput > 0.0 { 3_000_000 } else { 0 },
            latency_p99_ns: if throughput > 0.0 {
                40_000_000 + seed
            } else {
                0
            },
            recovery_ns: recovery_ms.iter().map(|v| v * 1_000_000).collect(),
            records_replayed: 100 * seed,
            virtual_time_ns: 10_000_000_000,
            events: 1000,
            failed_checks: if passed {
                Vec::new()
            } else {
                vec!["exactly-once-output".to_string()]
            },
            panic: None,
            replay: (!passed).then(|| {
                format!("ckptsim run scenarios/test.toml --seed {seed} --algorithm {algorithm}")
            }),
        }
    }

    /// Runs for one axis value (or none): aligned is slow, unaligned fast
    /// with in-flight data, `none` has no checkpoints at all.
    fn runs_at(vary: Option<&str>, scale: u64) -> Vec<RunMetrics> {
        let mut out = Vec::new();
        for seed in 1..=3 {
            out.push(run(
                "aligned",
                seed,
                vary,
                &[880 * scale, 900 * scale + seed, 1200 * scale],
                &[870 * scale, 890 * scale, 1190 * scale],
                &[0, 0, 0],
                9000.0,
                &[1500],
            ));
            out.push(run(
                "unaligned",
                seed,
                vary,
                &[2, 3 + seed, 4],
                &[0, 0, 0],
                &[100 * scale, 120 * scale, 300],
                9600.0,
                &[800 + seed],
            ));
            out.push(run("none", seed, vary, &[], &[], &[], 10000.0, &[]));
        }
        out
    }

    fn comparison(runs: Vec<RunMetrics>, algorithms: &[&str], vary: Option<Vary>) -> Comparison {
        let values: Vec<Option<String>> = match &vary {
            Some(v) => v.values.iter().cloned().map(Some).collect(),
            None => vec![None],
        };
        let mut groups = Vec::new();
        for v in &values {
            for a in algorithms {
                let these: Vec<&RunMetrics> = runs
                    .iter()
                    .filter(|r| r.algorithm == *a && r.vary == *v)
                    .collect();
                groups.push(aggregate(a, v.as_ref(), &these));
            }
        }
        Comparison {
            scenario: "scenarios/test, \"quoted\".toml".to_string(),
            command: "ckptsim compare scenarios/test.toml --algorithms aligned,unaligned,none --seeds 1..4 --out out".to_string(),
            algorithms: algorithms.iter().map(|a| a.to_string()).collect(),
            mutants: Vec::new(),
            seeds: "1..4".to_string(),
            vary,
            groups,
            runs,
        }
    }

    fn plain() -> Comparison {
        comparison(runs_at(None, 1), &["aligned", "unaligned", "none"], None)
    }

    fn varied() -> Comparison {
        let values = ["100ms", "1s", "10s"];
        let mut runs = Vec::new();
        for (i, v) in values.iter().enumerate() {
            runs.extend(runs_at(Some(v), [1, 4, 15][i]));
        }
        comparison(
            runs,
            &["aligned", "unaligned", "none"],
            Some(Vary {
                key: "checkpoint.interval".to_string(),
                values: values.iter().map(|v| v.to_string()).collect(),
            }),
        )
    }

    fn temp_dir(suffix: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ckptsim-out-{}-{suffix}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn read_all(files: &[PathBuf]) -> Vec<Vec<u8>> {
        files.iter().map(|f| std::fs::read(f).unwrap()).collect()
    }

    fn name(p: &Path) -> String {
        p.file_name().unwrap().to_string_lossy().to_string()
    }

    fn assert_svg(text: &str, file: &str) {
        let t = text.trim();
        assert!(
            t.starts_with("<svg") || t.starts_with("<?xml"),
            "{file}: {t:.80}"
        );
        assert!(t.ends_with("</svg>"), "{file}");
        assert_eq!(t.matches("<svg").count(), 1, "{file}");
    }

    /// Writes, checks the files, writes again and compares bytes.
    fn check(c: &Comparison, suffix: &str, notes: Option<&str>, legend: bool) -> Vec<PathBuf> {
        let dir = temp_dir(suffix);
        let files = write(c, &dir, notes).unwrap();
        let names: Vec<String> = files.iter().map(|f| name(f)).collect();
        assert_eq!(names[..2], ["results.json", "results.csv"]);
        assert_eq!(names.last().unwrap(), "README.md");
        for f in &files {
            assert!(f.is_file(), "{}", f.display());
        }
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(readme.contains(&c.command));
        assert!(readme.starts_with(&format!("# Comparison: {}\n", c.scenario)));
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let n = name(f);
            if n.ends_with(".svg") {
                assert_svg(&text, &n);
                assert!(readme.contains(&format!("]({n})")), "README lacks {n}");
                if legend {
                    for a in &c.algorithms {
                        assert!(text.contains(&format!(">\n{a}\n</text>")), "{n} lacks {a}");
                    }
                }
            }
        }
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        assert_eq!(json["runs"].as_array().unwrap().len(), c.runs.len());
        assert_eq!(json["groups"].as_array().unwrap().len(), c.groups.len());
        // CSV: a header and one line per run, all with the same number of
        // columns (no field here holds a quote or comma except the ones
        // we check for separately).
        let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), c.runs.len() + 1);
        let columns = lines[0].split(',').count();
        assert_eq!(columns, if c.vary.is_some() { 22 } else { 21 });
        for l in &lines {
            assert_eq!(l.split(',').count(), columns, "{l}");
        }
        if let Some(v) = &c.vary {
            assert!(lines[0].starts_with(&format!("algorithm,{},seed,", v.key)));
        }
        // Deterministic: the same bytes again, in place and elsewhere.
        let first = read_all(&files);
        let again = write(c, &dir, notes).unwrap();
        assert_eq!(files, again);
        assert_eq!(first, read_all(&again));
        let other = temp_dir(&format!("{suffix}-2"));
        let elsewhere = write(c, &other, notes).unwrap();
        assert_eq!(first, read_all(&elsewhere));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&other);
        files
    }

    #[test]
    fn writes_static_comparison() {
        let c = plain();
        let notes = "Published: aligned ≈ 1 s under backpressure.\n| not | a table |";
        let files = check(&c, "plain", Some(notes), true);
        let names: Vec<String> = files.iter().map(|f| name(f)).collect();
        assert_eq!(
            names,
            [
                "results.json",
                "results.csv",
                "checkpoint-duration.svg",
                "alignment.svg",
                "checkpoint-size.svg",
                "throughput-latency.svg",
                "recovery.svg",
                "README.md"
            ]
        );
        let readme = readme(&c, &charts(&c), Some(notes));
        assert!(readme.contains(
            "## Notes\n\nPublished: aligned ≈ 1 s under backpressure.\n| not | a table |\n"
        ));
        assert!(readme.contains("lowest **unaligned**"), "{readme}");
        assert!(readme.contains("highest **aligned**"), "{readme}");
        assert!(
            readme.contains("Persists in-flight data: unaligned"),
            "{readme}"
        );
        assert!(readme.contains("  - aligned: 90% of none"), "{readme}");
        assert!(
            readme.contains("No completed checkpoints: none."),
            "{readme}"
        );
        assert!(readme.contains("aligned (1 of 3)"), "{readme}");
        // Durations span 2 ms .. 1200 ms: a log axis (labels at powers of 10).
        let svg = render(&charts(&c)[0]).unwrap();
        assert!(
            svg.contains(">\n1.0k\n</text>") && svg.contains(">\n10\n</text>"),
            "{svg}"
        );
        // `none` has no checkpoints: marked in the legend.
        assert!(svg.contains("no data"));
    }

    #[test]
    fn writes_varied_comparison() {
        let c = varied();
        let files = check(&c, "vary", None, true);
        let names: Vec<String> = files.iter().map(|f| name(f)).collect();
        assert_eq!(
            names,
            [
                "results.json",
                "results.csv",
                "vary-checkpoint-duration.svg",
                "vary-alignment.svg",
                "vary-state-size.svg",
                "vary-in-flight-size.svg",
                "vary-throughput.svg",
                "vary-latency.svg",
                "vary-recovery.svg",
                "README.md"
            ]
        );
        let readme = readme(&c, &charts(&c), None);
        assert!(!readme.contains("## Notes"));
        assert!(
            readme.contains("- aligned: duration 902 ms → 13.5 s (×15)"),
            "{readme}"
        );
        assert!(
            readme.contains("At `checkpoint.interval` = 10s:"),
            "{readme}"
        );
        // The axis values label the x axis.
        let svg = render(&charts(&c)[0]).unwrap();
        for v in ["100ms", "1s", "10s", "checkpoint.interval"] {
            assert!(svg.contains(&format!(">\n{v}\n</text>")), "{v}");
        }
    }

    #[test]
    fn writes_empty_comparison() {
        // Every metric empty: no checkpoints, nothing committed, no
        // failures, zero throughput.
        let mut runs = Vec::new();
        for a in ["aligned", "none"] {
            let mut r = run(a, 1, None, &[], &[], &[], 0.0, &[]);
            r.records_replayed = 0;
            runs.push(r);
        }
        let mut c = comparison(runs, &["aligned", "none"], None);
        for g in &mut c.groups {
            for s in g.metrics.values_mut() {
                *s = Stat::default();
            }
        }
        check(&c, "empty", None, true);
        let dir = temp_dir("empty-svg");
        for f in write(&c, &dir, None).unwrap() {
            if name(&f).ends_with(".svg") {
                assert!(std::fs::read_to_string(&f).unwrap().contains("no data"));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);

        // Nothing at all: no algorithms, no runs, no groups; and an axis
        // whose groups are all missing.
        let nothing = comparison(Vec::new(), &[], None);
        check(&nothing, "nothing", None, false);
        let axis = comparison(
            Vec::new(),
            &["aligned"],
            Some(Vary {
                key: "network.buffer_credits".to_string(),
                values: vec!["2".to_string()],
            }),
        );
        check(&axis, "nothing-vary", None, true);
    }

    /// A run that panicked: listed with its message and replay line, left
    /// out of the metrics, empty metric cells in the CSV.
    #[test]
    fn a_panicked_run_is_a_failed_run_without_metrics() {
        let mut runs = runs_at(None, 1);
        let mut p = run("unaligned", 4, None, &[], &[], &[], 0.0, &[]);
        p.passed = false;
        p.guarantee = "unknown".to_string();
        p.failed_checks = vec!["panic".to_string()];
        p.panic = Some(crate::panics::Panicked {
            message: "simulator-panic mutant: failover of a crash".to_string(),
            location: "sim/runtime/world.rs:10:13".to_string(),
        });
        p.replay =
            Some("ckptsim run scenarios/test.toml --seed 4 --algorithm unaligned".to_string());
        runs.push(p);
        let c = comparison(runs, &["aligned", "unaligned", "none"], None);
        let g = c
            .groups
            .iter()
            .find(|g| g.algorithm == "unaligned")
            .unwrap();
        assert_eq!((g.runs, g.failed_runs, g.panicked_runs), (4, 1, 1));
        assert_eq!(
            g.metrics["throughput_rps"].n, 3,
            "the panicked run has no throughput"
        );
        check(&c, "panicked", None, true);
        let readme = readme(&c, &charts(&c), None);
        for needle in [
            "- Runs: 10 (1 failed their checks, 1 panicked)",
            "## Failed runs",
            "- unaligned, seed 4: panic: simulator-panic mutant: failover of a crash (at sim/runtime/world.rs:10:13)",
            "  `ckptsim run scenarios/test.toml --seed 4 --algorithm unaligned`",
            "- aligned, seed 2: failed exactly-once-output",
            "Runs that failed their guarantee checks: aligned (1 of 3).",
            "Runs that panicked (bugs of ckptsim itself, left out of the metrics): unaligned (1 of 4).",
        ] {
            assert!(readme.contains(needle), "missing {needle:?} in\n{readme}");
        }
        let text = csv(&c);
        let row = text
            .lines()
            .find(|l| l.starts_with("unaligned,4,"))
            .unwrap();
        assert_eq!(
            row,
            "unaligned,4,false,unknown,,,,,,,,,,,,,,,panic,simulator-panic mutant: failover of a crash (at sim/runtime/world.rs:10:13),ckptsim run scenarios/test.toml --seed 4 --algorithm unaligned"
        );
    }

    #[test]
    fn csv_quotes_fields() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        let mut c = plain();
        c.vary = Some(Vary {
            key: "operators.sink,cost".to_string(),
            values: vec!["1ms".to_string()],
        });
        let text = csv(&c);
        assert!(text.starts_with("algorithm,\"operators.sink,cost\",seed,passed,"));
        // A run with no checkpoints leaves those cells empty.
        let none = text.lines().find(|l| l.starts_with("none,")).unwrap();
        assert!(
            none.starts_with("none,,1,true,exactly-once,0,0,,,,,,,10000.000,3.000,40.000,,100,"),
            "{none}"
        );
    }

    #[test]
    fn formats_numbers_fixed() {
        assert_eq!(num(1234.5678), "1235");
        assert_eq!(num(12.345), "12.3");
        assert_eq!(num(0.5), "0.50");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(1500.0), "1.5k");
        assert_eq!(short(25000.0), "25k");
        assert_eq!(dur(880.0), "880 ms");
        assert_eq!(dur(13_200.0), "13.2 s");
        assert_eq!(ratio(15.2), "×15");
        assert_eq!(ratio(0.5), "×0.50");
        assert_eq!(size(2048.0), "2.0 MiB");
    }
}
