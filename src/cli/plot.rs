//! Histogram pictures of a signature's distances (`tbstream stats --plot`): one panel per
//! winner, one bar per distance, coloured by the side to move. Text is laid out (SVG) and
//! drawn (PNG) with a TrueType font found on the system.

use super::report::thousands;
use anyhow::{bail, Context};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::Color as _;
use std::path::Path;
use tbstream::{Color, SignatureStats, MAX_DISTANCE};

const SIZE: (u32, u32) = (1000, 720);
/// Fonts tried for the text, in order.
const FONT_CANDIDATES: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];
const WTM_COLOR: RGBColor = RGBColor(70, 110, 200);
const BTM_COLOR: RGBColor = RGBColor(230, 140, 40);

/// Draws the histogram to `path` (`.svg` or `.png`).
pub fn histogram(stats: &SignatureStats, path: &Path) -> anyhow::Result<()> {
    let ext = path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase());
    let result = match ext.as_deref() {
        Some("svg") => {
            register_font()?;
            draw(SVGBackend::new(path, SIZE).into_drawing_area(), stats)
        }
        Some("png") => {
            register_font()?;
            draw(BitMapBackend::new(path, SIZE).into_drawing_area(), stats)
        }
        _ => bail!("--plot {}: the file name must end in .svg or .png", path.display()),
    };
    result.with_context(|| format!("drawing {}", path.display()))
}

/// Makes a system TrueType font the "sans-serif" of the plots.
fn register_font() -> anyhow::Result<()> {
    for candidate in FONT_CANDIDATES {
        if let Ok(bytes) = std::fs::read(candidate) {
            // Registered once per process; the font lives as long as the program.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                return Ok(());
            }
        }
    }
    bail!("a plot needs a TrueType font; none of {} could be read", FONT_CANDIDATES.join(", "))
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, stats: &SignatureStats) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("{e}");
    root.fill(&WHITE).map_err(fail)?;
    let root = root
        .titled(&format!("{}: positions by distance to mate or zeroing move", stats.material), ("sans-serif", 24))
        .map_err(fail)?;
    let panels = root.split_evenly((2, 1));
    for (area, winner) in panels.iter().zip([Color::White, Color::Black]) {
        let series = |side: Color| -> Vec<(u32, u64)> {
            let t = stats.to_move(side);
            let h = if winner == Color::White { &t.white_by_distance } else { &t.black_by_distance };
            h.iter().enumerate().filter(|(_, &n)| n > 0).map(|(d, &n)| (d as u32, n)).collect()
        };
        let (wtm, btm) = (series(Color::White), series(Color::Black));
        let longest = stats.longest(winner) as u32;
        let max_count = wtm.iter().chain(&btm).map(|&(_, n)| n).max().unwrap_or(0).max(1);
        let name = if winner == Color::White { "White" } else { "Black" };
        let total: u64 = wtm.iter().chain(&btm).map(|&(_, n)| n).sum();
        let caption = format!("{name} wins: {} positions, longest {longest} plies", thousands(total));
        let x_end = (longest + 2).clamp(4, MAX_DISTANCE as u32 + 2);
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .caption(caption, ("sans-serif", 18))
            .x_label_area_size(36)
            .y_label_area_size(80)
            .build_cartesian_2d((0u32..x_end).into_segmented(), 0u64..max_count + max_count / 10 + 1)
            .map_err(fail)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("distance (plies)")
            .y_desc("positions")
            .y_label_formatter(&|y| thousands(*y))
            .draw()
            .map_err(fail)?;
        for (data, color, label) in [(wtm, WTM_COLOR, "white to move"), (btm, BTM_COLOR, "black to move")] {
            chart
                .draw_series(Histogram::vertical(&chart).style(color.filled()).margin(1).data(data))
                .map_err(fail)?
                .label(label)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(fail)?;
    }
    root.present().map_err(fail)?;
    Ok(())
}
