//! The report's plot, drawn with plotters: operations per second and p99
//! latency per second, one line per operation kind, with labelled axes. The
//! first second (connections opening, caches warming) is shaded and named
//! warm-up; latency is on a log scale, so a warm-up spike does not flatten
//! the steady state against the axis.

use crate::run::Recorded;
use crate::workload::{KINDS, KIND_COUNT};
use hdrhistogram::Histogram;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Seconds at the start marked as warm-up.
const WARM_UP: f64 = 1.0;

const COLORS: [RGBColor; KIND_COUNT] = [
    RGBColor(0xd3, 0x54, 0x00),
    RGBColor(0x2e, 0x86, 0xde),
    RGBColor(0x27, 0xae, 0x60),
    RGBColor(0x8e, 0x44, 0xad),
    RGBColor(0x7f, 0x8c, 0x8d),
    RGBColor(0xc0, 0x39, 0x2b),
    RGBColor(0x16, 0xa0, 0x85),
    RGBColor(0xf3, 0x9c, 0x12),
    RGBColor(0xe8, 0x43, 0x93),
    RGBColor(0x34, 0x49, 0x5e),
    RGBColor(0x9b, 0x59, 0xb6),
    RGBColor(0x1a, 0xbc, 0x9c),
];

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Drawn = Result<(), Box<dyn std::error::Error>>;

/// One point per second a kind ran in: (middle of the second, value).
type Series = Vec<(f64, f64)>;

/// The SVG document.
pub fn svg(rec: &Recorded, title: &str) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (960, 700)).into_drawing_area();
        if let Err(e) = draw(&root, rec, title).and_then(|()| Ok(root.present()?)) {
            // A plot that cannot be drawn leaves the text and JSON reports.
            eprintln!("socialite bench: the plot could not be drawn: {e}");
        }
    }
    out
}

fn draw(root: &Area<'_>, rec: &Recorded, title: &str) -> Drawn {
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (top, bottom) = root.split_vertically(330);
    // Whole seconds only: the last, cut short by the end of the run, would
    // show a drop that did not happen.
    let whole = (rec.elapsed.as_secs_f64() + 0.01) as usize;
    let seconds = &rec.per_second[..whole.min(rec.per_second.len())];
    let per_kind = |f: &dyn Fn(&Histogram<u64>) -> f64| -> Vec<Series> {
        KINDS
            .iter()
            .map(|k| {
                seconds
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| !s[k.index()].is_empty())
                    // Each second at its middle.
                    .map(|(i, s)| (i as f64 + 0.5, f(&s[k.index()])))
                    .collect()
            })
            .collect()
    };
    let seconds = seconds.len().max(2) as f64;
    let rates = per_kind(&|h| h.len() as f64);
    let p99 = per_kind(&|h| h.value_at_quantile(0.99) as f64 / 1000.0);
    rates_chart(&top, seconds, &rates)?;
    latency_chart(&bottom, seconds, &p99)
}

fn rates_chart(area: &Area<'_>, seconds: f64, rates: &[Series]) -> Drawn {
    let max = rates.iter().flatten().map(|p| p.1).fold(1.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .caption("Throughput", ("sans-serif", 16))
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..seconds, 0.0..max)?;
    warm_up(&mut chart, 0.0, max)?;
    chart
        .configure_mesh()
        .x_desc("time since the start (s)")
        .y_desc("operations per second")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    lines(&mut chart, rates)
}

fn latency_chart(area: &Area<'_>, seconds: f64, p99: &[Series]) -> Drawn {
    let values = || p99.iter().flatten().map(|p| p.1).filter(|v| *v > 0.0);
    let low = values().fold(f64::INFINITY, f64::min);
    let high = values().fold(0.0, f64::max);
    let (low, high) = if high > 0.0 {
        (low / 2.0, high * 2.0)
    } else {
        (0.01, 1.0)
    };
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .caption("p99 latency per second (log scale)", ("sans-serif", 16))
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..seconds, (low..high).log_scale())?;
    warm_up(&mut chart, low, high)?;
    chart
        .configure_mesh()
        .x_desc("time since the start (s)")
        .y_desc("p99 latency (ms)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| trimmed(*y))
        .draw()?;
    lines(&mut chart, p99)
}

/// A latency tick: no trailing zeros (`0.5`, `2`, `1000`).
fn trimmed(ms: f64) -> String {
    let text = format!("{ms:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The warm-up's shaded band, from `low` to `high`, and its name.
fn warm_up<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, impl Ranged<ValueType = f64>>>,
    low: f64,
    high: f64,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let shade = RGBColor(0xec, 0xec, 0xec).filled();
    chart.draw_series(std::iter::once(Rectangle::new(
        [(0.0, low), (WARM_UP, high)],
        shade,
    )))?;
    let grey = ("sans-serif", 12)
        .into_font()
        .color(&RGBColor(0x77, 0x77, 0x77));
    chart.draw_series(std::iter::once(Text::new("warm-up", (0.05, high), grey)))?;
    Ok(())
}

/// One line per kind that ran, with the legend.
fn lines<'a, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    data: &[Series],
) -> Drawn
where
    Y: Ranged<ValueType = f64>,
{
    for (k, series) in data.iter().enumerate() {
        if series.is_empty() {
            continue;
        }
        let color = COLORS[k];
        chart
            .draw_series(LineSeries::new(
                series.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(KINDS[k].name())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn histogram(micros: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 3_600_000_000, 2).unwrap();
        for m in micros {
            h.record(*m).unwrap();
        }
        h
    }

    #[test]
    fn axes_are_labelled_and_the_warm_up_spike_does_not_set_the_scale() {
        // Reads: a 500 ms warm-up second, then 2 ms; no other kind ran.
        let read = KINDS.iter().position(|k| k.name() == "read").unwrap();
        let per_second: Vec<Vec<Histogram<u64>>> = (0..10)
            .map(|s| {
                let mut row: Vec<_> = KINDS.iter().map(|_| histogram(&[])).collect();
                let latency = if s == 0 { 500_000 } else { 2_000 };
                row[read] = histogram(&vec![latency; 100]);
                row
            })
            .collect();
        let rec = Recorded {
            overall: KINDS.iter().map(|_| histogram(&[])).collect(),
            per_second,
            errors: [0; KIND_COUNT],
            refused: [0; KIND_COUNT],
            first_errors: Vec::new(),
            elapsed: Duration::from_secs(10),
            probe: histogram(&[]),
            probe_timeouts: 0,
            metrics_at_end: Ok(String::new()),
        };
        let svg = svg(&rec, "test run");
        let texts: Vec<&str> = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| t.split_once('>'))
            .map(|(_, rest)| rest.split('<').next().unwrap_or("").trim())
            .collect();
        for text in [
            "test run",
            "operations per second",
            "p99 latency (ms)",
            "time since the start (s)",
            "warm-up",
            "read",
        ] {
            assert!(texts.contains(&text), "`{text}` is not in {texts:?}");
        }
        assert!(
            !texts.contains(&"post"),
            "a kind that did not run has no line"
        );
        // Log scale: the steady 2 ms and the 500 ms spike both get ticks.
        for tick in ["10", "100"] {
            assert!(texts.contains(&tick), "no tick {tick} in {texts:?}");
        }
    }
}
