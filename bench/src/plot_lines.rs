//! A plot of named latency series over a run: p99 per second, one line
//! each, on a log scale with labelled axes (the firehose and webhook
//! benches).

use plotters::prelude::*;

const COLORS: [RGBColor; 4] = [
    RGBColor(0x2e, 0x86, 0xde),
    RGBColor(0xd3, 0x54, 0x00),
    RGBColor(0x27, 0xae, 0x60),
    RGBColor(0x8e, 0x44, 0xad),
];

/// (name, points: seconds since the run's start, milliseconds).
pub type Named<'a> = (&'a str, Vec<(f64, f64)>);

/// The SVG document; empty of lines (but drawn) when nothing was measured.
pub fn latency_svg(title: &str, y_desc: &str, series: &[Named<'_>]) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (960, 420)).into_drawing_area();
        if let Err(e) = draw(&root, title, y_desc, series) {
            eprintln!("socialite bench: the plot could not be drawn: {e}");
        }
    }
    out
}

fn draw(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    y_desc: &str,
    series: &[Named<'_>],
) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let points = || series.iter().flat_map(|(_, s)| s.iter());
    let seconds = points().map(|p| p.0).fold(1.0, f64::max) + 1.0;
    let low = points()
        .map(|p| p.1)
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let high = points().map(|p| p.1).fold(0.0, f64::max);
    let (low, high) = match high > 0.0 {
        true => (low / 2.0, high * 2.0),
        false => (0.1, 10.0),
    };
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .caption(title, ("sans-serif", 18))
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..seconds, (low..high).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("time since the run's start (s)")
        .y_desc(y_desc)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    for (i, (name, points)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(*name)
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
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_lines_and_the_axes_are_drawn() {
        let svg = latency_svg(
            "event → delivery",
            "p99 (ms)",
            &[
                ("alone", vec![(0.5, 3.0), (1.5, 4.0)]),
                ("crowded", vec![(0.5, 5.0)]),
            ],
        );
        for text in ["alone", "crowded", "p99 (ms)", "time since the run"] {
            assert!(svg.contains(text), "{text} is not drawn");
        }
        assert!(latency_svg("empty", "ms", &[]).contains("<svg"));
    }
}
