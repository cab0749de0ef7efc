//! plotters' `CanvasBackend` draws in the canvas's bitmap pixels, so a chart whose bitmap is
//! as wide as its box in CSS pixels is stretched, and blurred, on a screen with more device
//! pixels per CSS pixel (a laptop's 2x panel, a phone's 3x, a projector driven at 1.25x).
//! `HiDpiCanvas` gives plotters the box's size in CSS pixels and draws on a bitmap of the
//! box's device pixels, through a context scaled by their ratio: the charts' code keeps its
//! sizes in CSS pixels (fonts, margins, line widths) and the browser renders them sharp.

use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Device pixels per CSS pixel a chart is drawn at, at most: a 3x phone draws at 2x (nine
/// times a 1x chart's pixels to fill at each redraw is more than a sharp line needs).
pub const DEVICE_PIXEL_RATIO_MAX: f64 = 2.0;

/// The screen's device pixels per CSS pixel, within [1, `DEVICE_PIXEL_RATIO_MAX`].
pub fn device_pixel_ratio() -> f64 {
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
    if dpr.is_finite() {
        dpr.clamp(1.0, DEVICE_PIXEL_RATIO_MAX)
    } else {
        1.0
    }
}

/// A bitmap's size for a box of `css` pixels at `ratio` device pixels per CSS pixel.
pub fn bitmap_size(css: (u32, u32), ratio: f64) -> (u32, u32) {
    ((f64::from(css.0) * ratio).round() as u32, (f64::from(css.1) * ratio).round() as u32)
}

pub struct HiDpiCanvas {
    inner: CanvasBackend,
    css: (u32, u32),
}

type Error = <CanvasBackend as DrawingBackend>::ErrorType;

impl HiDpiCanvas {
    /// Sizes `canvas`'s bitmap for a box of `css` pixels on this screen and scales its context
    /// to match (every draw: resizing a bitmap resets its context, and a window moved to
    /// another screen changes the ratio).
    pub fn new(canvas: &HtmlCanvasElement, css: (u32, u32)) -> Option<HiDpiCanvas> {
        let (w, h) = bitmap_size(css, device_pixel_ratio());
        if canvas.width() != w || canvas.height() != h {
            canvas.set_width(w);
            canvas.set_height(h);
        }
        let ctx: CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
        // The exact ratio of the rounded bitmap to the box, per axis.
        let (sx, sy) = (f64::from(w) / f64::from(css.0.max(1)), f64::from(h) / f64::from(css.1.max(1)));
        ctx.set_transform(sx, 0.0, 0.0, sy, 0.0, 0.0).ok()?;
        Some(HiDpiCanvas { inner: CanvasBackend::with_canvas_object(canvas.clone())?, css })
    }
}

impl DrawingBackend for HiDpiCanvas {
    type ErrorType = Error;

    fn get_size(&self) -> (u32, u32) {
        self.css
    }
    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(&mut self, from: BackendCoord, to: BackendCoord, style: &S) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.fill_polygon(vert, style)
    }
    fn draw_text<S: BackendTextStyle>(&mut self, text: &str, style: &S, pos: BackendCoord) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_text(text, style, pos)
    }
    fn estimate_text_size<S: BackendTextStyle>(&self, text: &str, style: &S) -> Result<(u32, u32), DrawingErrorKind<Error>> {
        self.inner.estimate_text_size(text, style)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bitmap_has_the_box_s_device_pixels() {
        assert_eq!(bitmap_size((640, 320), 1.0), (640, 320));
        assert_eq!(bitmap_size((640, 320), 2.0), (1280, 640));
        // A fractional ratio (a 125% display setting) rounds to whole pixels.
        assert_eq!(bitmap_size((333, 150), 1.25), (416, 188));
    }
}
