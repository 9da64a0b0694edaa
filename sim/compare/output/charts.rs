//! The SVG charts of a comparison: what each chart shows (data only), then
//! drawing it with plotters' SVG backend into a string, so the bytes depend
//! only on the data. Part of the `cli` feature: without it a report has no
//! charts.

use super::{algorithms, group, p50, p99, short, stat};
use super::{Comparison, Group, Stat};
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::io;

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

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// The fixed colour of an algorithm (a categorical palette); unknown names
/// get one of a few spare colours, chosen by a fixed hash of the name.
pub fn colour(algorithm: &str) -> RGBColor {
    if let Some(a) = crate::protocol::Algorithm::from_name(algorithm) {
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
pub(super) struct Chart {
    pub(super) file: String,
    pub(super) title: String,
    panels: Vec<Panel>,
    /// Legend entries per algorithm are drawn as lines (else boxes).
    lines: bool,
    algorithms: Vec<String>,
    key: Vec<(&'static str, Key)>,
}

pub(super) fn charts(c: &Comparison) -> Vec<Chart> {
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
    let bars = |title: &str, y_desc: &str, stacked: bool, f: &[Getter]| {
        bar_panel(&groups, title, y_desc, stacked, f)
    };
    let chart = |file: &str, title: &str, panels: Vec<Panel>, key: Vec<(&'static str, Key)>| {
        bar_chart(&algs, file, title, panels, key)
    };
    let mut charts = vec![
        chart(
            "checkpoint-duration.svg",
            "Checkpoint duration",
            vec![duration_boxes(&groups)],
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
    ];
    charts.extend(crate::compare::has_event_time(c).then(|| lag_chart(&algs, &groups)));
    charts.extend(crate::compare::has_files(c).then(|| files_chart(&algs, &groups)));
    charts
}

/// What checkpoints wrote and refer to, and restores from files.
fn files_chart(algs: &[String], groups: &[(String, Option<&Group>)]) -> Chart {
    let sizes: [Getter; 2] = [&|g| p50(g, "checkpointed_kib"), &|g| p50(g, "full_kib")];
    let restore: [Getter; 2] = [&|g| p50(g, "restore_ms"), &|g| p99(g, "restore_ms")];
    let panels = vec![
        bar_panel(
            groups,
            "Operator state written for the checkpoint, and every file it refers to (p50)",
            "KiB",
            false,
            &sizes,
        ),
        bar_panel(
            groups,
            "Restore time (per restore from files: read and replay)",
            "ms",
            false,
            &restore,
        ),
    ];
    let key = vec![
        ("written / p50", Key::Solid),
        ("referred to / p99", Key::Light),
    ];
    let title = "Checkpoint files and restores";
    bar_chart(algs, "checkpoint-files.svg", title, panels, key)
}

/// A comparison's axis and algorithms, for its line charts.
struct Axis<'a> {
    c: &'a Comparison,
    algs: Vec<String>,
    key: &'a str,
    values: &'a [String],
}

impl Axis<'_> {
    /// Along the axis, per algorithm: `f` of each axis value's group.
    fn along(&self, f: Getter) -> Vec<Values> {
        let (c, values) = (self.c, self.values);
        (self.algs.iter())
            .map(|a| values.iter().map(|v| f(group(c, a, Some(v)))).collect())
            .collect()
    }

    /// What checkpoints wrote and refer to, and restores from files, along
    /// the axis.
    fn files_charts(&self) -> [Chart; 2] {
        [
            self.line_chart(
                "vary-checkpoint-files.svg",
                "Operator state written for the checkpoint, and every file it refers to (p50)",
                "KiB",
                &|g| p50(g, "checkpointed_kib"),
                Some(&|g| p50(g, "full_kib")),
                vec![("written", Key::Line), ("referred to", Key::Dashed)],
            ),
            self.line_chart(
                "vary-restore.svg",
                "Restore time (per restore from files: the slowest task reading and replaying)",
                "ms",
                &|g| p50(g, "restore_ms"),
                Some(&|g| p99(g, "restore_ms")),
                vec![("p50", Key::Line), ("p99", Key::Dashed)],
            ),
        ]
    }

    /// One line per algorithm along the axis (`dashed`: a second one).
    fn line_chart(
        &self,
        file: &str,
        title: &str,
        y_desc: &str,
        solid: Getter,
        dashed: Option<Getter>,
        key_text: Vec<(&'static str, Key)>,
    ) -> Chart {
        let solid = self.along(solid);
        let dashed = dashed.map_or_else(|| vec![Vec::new(); self.algs.len()], |d| self.along(d));
        Chart {
            file: file.to_string(),
            title: title.to_string(),
            panels: vec![Panel::Lines(LinePanel {
                title: title.to_string(),
                y_desc: y_desc.to_string(),
                x_desc: self.key.to_string(),
                x_labels: self.values.to_vec(),
                series: (self.algs.iter().zip(solid).zip(dashed))
                    .map(|((a, s), d)| (a.clone(), s, d))
                    .collect(),
            })],
            lines: true,
            algorithms: self.algs.clone(),
            key: key_text,
        }
    }
}

/// Bars per algorithm from a list of value getters.
fn bar_panel(
    groups: &[(String, Option<&Group>)],
    title: &str,
    y_desc: &str,
    stacked: bool,
    f: &[Getter],
) -> Panel {
    Panel::Bars(BarPanel {
        title: title.to_string(),
        y_desc: y_desc.to_string(),
        bars: groups
            .iter()
            .map(|(a, g)| (a.clone(), f.iter().map(|f| f(*g)).collect()))
            .collect(),
        stacked,
    })
}

/// Watermark lag per algorithm (a job with event time).
fn lag_chart(algs: &[String], groups: &[(String, Option<&Group>)]) -> Chart {
    let lag: [Getter; 2] = [&|g| p50(g, "watermark_lag_p50_ms"), &|g| {
        p50(g, "watermark_lag_p99_ms")
    }];
    let title = "Watermark lag, source to sinks (median over seeds of each run's p50, p99)";
    let panel = bar_panel(groups, title, "ms", false, &lag);
    let key = vec![("p50 / median", Key::Solid), ("p99", Key::Light)];
    bar_chart(algs, "watermark-lag.svg", "Watermark lag", vec![panel], key)
}

/// A chart of bar (or box) panels, one entry per algorithm.
fn bar_chart(
    algs: &[String],
    file: &str,
    title: &str,
    panels: Vec<Panel>,
    key: Vec<(&'static str, Key)>,
) -> Chart {
    Chart {
        file: file.to_string(),
        title: title.to_string(),
        panels,
        lines: false,
        algorithms: algs.to_vec(),
        key,
    }
}

/// Checkpoint durations per algorithm, as boxes over every completed
/// checkpoint of every seed.
fn duration_boxes(groups: &[(String, Option<&Group>)]) -> Panel {
    Panel::Box(BoxPanel {
        title: "Checkpoint duration (per completed checkpoint, all seeds)".to_string(),
        y_desc: "ms".to_string(),
        boxes: groups
            .iter()
            .map(|(a, g)| (a.clone(), stat(*g, "checkpoint_duration_ms")))
            .collect(),
    })
}

fn vary_charts(c: &Comparison, key: &str, values: &[String]) -> Vec<Chart> {
    let axis = Axis {
        c,
        algs: algorithms(c),
        key,
        values,
    };
    let chart = |file: &str,
                 title: &str,
                 y_desc: &str,
                 solid: Getter,
                 dashed: Option<Getter>,
                 key_text: Vec<(&'static str, Key)>| {
        axis.line_chart(file, title, y_desc, solid, dashed, key_text)
    };
    let p50_p99 = || vec![("p50", Key::Line), ("p99", Key::Dashed)];
    let p50_only = || vec![("p50", Key::Line)];
    let mut charts = vec![
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
    ];
    if crate::compare::has_files(c) {
        charts.extend(axis.files_charts());
    }
    if crate::compare::has_event_time(c) {
        charts.push(chart(
            "vary-watermark-lag.svg",
            "Watermark lag, source to sinks (median over seeds of each run's p50, p99)",
            "ms",
            &|g| p50(g, "watermark_lag_p50_ms"),
            Some(&|g| p50(g, "watermark_lag_p99_ms")),
            p50_p99(),
        ));
    }
    charts
}

// ---------------------------------------------------------------------------
// Drawing

/// Renders a chart into an SVG string (the backend writes no timestamps, so
/// the bytes depend only on the data).
pub(super) fn render(chart: &Chart) -> io::Result<String> {
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
