//! SVG -> PNG with resvg (tiny-skia), text set in the embedded DejaVu Sans so no system font is needed.

use std::sync::{Arc, OnceLock};

use resvg::tiny_skia::{Pixmap, Transform};
use resvg::usvg::{fontdb, Options, Tree};

use super::{FONT_BYTES, FONT_FAMILY};
use crate::error::PlotError;

/// Largest PNG side accepted, px.
const MAX_SIDE: f32 = 16384.0;

/// A font database holding only the embedded font, built once.
fn font_db() -> Arc<fontdb::Database> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_data(FONT_BYTES.to_vec());
        // Generic families, and serif (usvg's last resort for unknown names), all map to it.
        db.set_sans_serif_family(FONT_FAMILY);
        db.set_serif_family(FONT_FAMILY);
        db.set_monospace_family(FONT_FAMILY);
        Arc::new(db)
    })
    .clone()
}

/// usvg options that resolve every font family to the embedded DejaVu Sans.
pub(crate) fn usvg_options() -> Options<'static> {
    Options {
        fontdb: font_db(),
        font_family: FONT_FAMILY.to_string(),
        ..Options::default()
    }
}

/// Renders `svg` to PNG bytes at `scale` times its size (1.0: 800x480 px for the plots
/// here, 2.0 for high-DPI). Errors ([`PlotError`]) for unparsable SVG, a scale that is not
/// finite and positive, or an image larger than 16384 px on a side.
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, PlotError> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(PlotError::Scale(scale));
    }
    let tree = Tree::from_str(svg, &usvg_options())?;
    let size = tree.size();
    let (w, h) = (
        (size.width() * scale).ceil(),
        (size.height() * scale).ceil(),
    );
    if w > MAX_SIDE || h > MAX_SIDE {
        return Err(PlotError::TooLarge {
            width: w,
            height: h,
            max: MAX_SIDE,
        });
    }
    let mut pixmap =
        Pixmap::new(w.max(1.0) as u32, h.max(1.0) as u32).ok_or(PlotError::Allocate {
            width: w,
            height: h,
        })?;
    resvg::render(
        &tree,
        Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    Ok(encode(&pixmap)?)
}

/// Encodes a rendered plot as PNG: RGB when every pixel is opaque (the plots paint a white
/// background), RGBA otherwise, with the `png` crate's fast compression. tiny-skia's own
/// `encode_png` always writes RGBA at the default level, about four times slower here.
fn encode(pixmap: &Pixmap) -> Result<Vec<u8>, png::EncodingError> {
    let opaque = pixmap.pixels().iter().all(|p| p.alpha() == 255);
    let (color, bytes) = if opaque {
        let rgb: Vec<u8> = pixmap
            .pixels()
            .iter()
            .flat_map(|p| [p.red(), p.green(), p.blue()])
            .collect();
        (png::ColorType::Rgb, rgb)
    } else {
        let rgba: Vec<u8> = pixmap
            .pixels()
            .iter()
            .flat_map(|p| {
                let c = p.demultiply();
                [c.red(), c.green(), c.blue(), c.alpha()]
            })
            .collect();
        (png::ColorType::Rgba, rgba)
    };
    let mut out = Vec::with_capacity(bytes.len() / 8);
    {
        let mut enc = png::Encoder::new(&mut out, pixmap.width(), pixmap.height());
        enc.set_color(color);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        enc.write_header()?.write_image_data(&bytes)?;
    }
    Ok(out)
}
