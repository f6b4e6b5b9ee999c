//! The software renderer of `tests/common/software_renderer.rs` (pictures of the app on the GPU
//! machine, which has no display): exact pixels of known shapes, texture filters, partial
//! texture updates and frees, text where egui laid it out, and the real app's tabs.
//!
//! With `HEATLAB_RENDER_OUT=DIR`, the app's renders are also written there as PNGs, to compare
//! by eye with `heatlab gui --screenshot` under Xvfb.

use crate::common::app::wait_until;
use crate::common::{bad_kernels, software_renderer};

use std::time::Duration;

use eframe::egui::epaint::{ClippedPrimitive, ImageDelta, Mesh, Primitive};
use eframe::egui::{
    self, pos2, Color32, ColorImage, ImageData, Rect, TextureId, TextureOptions, TexturesDelta,
    Vec2,
};
use egui_kittest::kittest::Queryable;
use egui_kittest::{Harness, TestRenderer};
use heatlab::ui::{AppOptions, HeatlabApp, Settings};
use heatlab_engine::compute::BackendChoice;
use heatlab_engine::grid::GridSize;
use heatlab_engine::session::lab::{CompileFailure, LabEvent};
use image::RgbaImage;
use software_renderer::SoftwareRenderer;

const TEXTURE: TextureId = TextureId::Managed(7);
const BLACK: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

fn set_texture(
    renderer: &mut SoftwareRenderer,
    pos: Option<[usize; 2]>,
    size: [usize; 2],
    pixels: Vec<Color32>,
    options: TextureOptions,
) {
    let mut delta = TexturesDelta::default();
    delta.set.insert(
        TEXTURE,
        [ImageDelta {
            image: ImageData::Color(ColorImage::new(size, pixels).into()),
            options,
            pos,
        }]
        .into_iter()
        .collect(),
    );
    renderer.handle_delta(&mut delta);
}

fn quad(rect: Rect, uv: Rect, colour: Color32, clip: Rect) -> Vec<ClippedPrimitive> {
    let mut mesh = Mesh::with_texture(TEXTURE);
    mesh.add_rect_with_uv(rect, uv, colour);
    vec![ClippedPrimitive {
        clip_rect: clip,
        primitive: Primitive::Mesh(mesh),
    }]
}

fn red_row(image: &RgbaImage, y: u32) -> Vec<u8> {
    (0..image.width())
        .map(|x| image.get_pixel(x, y)[0])
        .collect()
}

#[test]
fn a_clipped_half_transparent_rect_covers_each_pixel_once() {
    let mut renderer = SoftwareRenderer::default();
    set_texture(
        &mut renderer,
        None,
        [1, 1],
        vec![Color32::WHITE],
        TextureOptions::LINEAR,
    );
    let full = Rect::from_min_max(pos2(0.0, 0.0), pos2(10.0, 10.0));
    let half_red = Color32::from_rgba_premultiplied(128, 0, 0, 128);
    let rect = Rect::from_min_max(pos2(2.0, 2.0), pos2(8.0, 8.0));
    // The clip rectangle cuts at x = 5 (in points; 10 pixels at 2 pixels per point).
    let clip = Rect::from_min_max(pos2(0.0, 0.0), pos2(5.0, 10.0));
    for pixels_per_point in [1.0, 2.0] {
        let size = (10.0 * pixels_per_point) as u32;
        let image = renderer
            .rasterize(
                &quad(rect, full, half_red, clip),
                [size, size],
                pixels_per_point,
                BLACK,
            )
            .unwrap();
        let inside = |at: f32| (2.0..8.0).contains(&at);
        for y in 0..size {
            for x in 0..size {
                let (px, py) = (
                    (x as f32 + 0.5) / pixels_per_point,
                    (y as f32 + 0.5) / pixels_per_point,
                );
                // Half red over black, once: 128 (twice, on the diagonal, would be 192).
                let expected = if inside(px) && inside(py) && px < 5.0 {
                    [128, 0, 0, 255]
                } else {
                    [0, 0, 0, 255]
                };
                assert_eq!(
                    image.get_pixel(x, y).0,
                    expected,
                    "({x}, {y}) at {pixels_per_point} pixels per point"
                );
            }
        }
    }
}

#[test]
fn textures_are_sampled_as_their_options_say() {
    let mut renderer = SoftwareRenderer::default();
    let unit = Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0));
    let strip = Rect::from_min_max(pos2(0.0, 0.0), pos2(4.0, 1.0));
    for (options, expected) in [
        // Texel centres at 1 and 3 pixels: bilinear between black and white, clamped outside.
        (TextureOptions::LINEAR, vec![0, 64, 191, 255]),
        (TextureOptions::NEAREST, vec![0, 0, 255, 255]),
    ] {
        set_texture(
            &mut renderer,
            None,
            [2, 1],
            vec![Color32::BLACK, Color32::WHITE],
            options,
        );
        let image = renderer
            .rasterize(
                &quad(strip, unit, Color32::WHITE, strip),
                [4, 1],
                1.0,
                BLACK,
            )
            .unwrap();
        assert_eq!(red_row(&image, 0), expected, "{options:?}");
    }
    // The vertex colour multiplies the texture's, premultiplied: half-transparent white over
    // the green clear colour.
    let image = renderer
        .rasterize(
            &quad(
                strip,
                unit,
                Color32::from_rgba_premultiplied(128, 128, 128, 128),
                strip,
            ),
            [4, 1],
            1.0,
            [0.0, 1.0, 0.0, 1.0],
        )
        .unwrap();
    assert_eq!(image.get_pixel(3, 0).0, [128, 255, 128, 255]);
    assert_eq!(image.get_pixel(0, 0).0, [0, 127, 0, 255]);
}

#[test]
fn patches_land_where_they_are_put_and_frees_wait_for_the_next_frame() {
    let mut renderer = SoftwareRenderer::default();
    set_texture(
        &mut renderer,
        None,
        [2, 2],
        vec![Color32::BLACK; 4],
        TextureOptions::NEAREST,
    );
    set_texture(
        &mut renderer,
        Some([1, 1]),
        [1, 1],
        vec![Color32::WHITE],
        TextureOptions::NEAREST,
    );
    let unit = Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0));
    let square = Rect::from_min_max(pos2(0.0, 0.0), pos2(2.0, 2.0));
    let shapes = quad(square, unit, Color32::WHITE, square);
    let image = renderer.rasterize(&shapes, [2, 2], 1.0, BLACK).unwrap();
    assert_eq!(red_row(&image, 0), vec![0, 0]);
    assert_eq!(red_row(&image, 1), vec![0, 255]);

    // Freed by this frame: still there to paint it ...
    let mut free = TexturesDelta::default();
    free.free.insert(TEXTURE);
    renderer.handle_delta(&mut free);
    assert!(renderer.rasterize(&shapes, [2, 2], 1.0, BLACK).is_ok());
    // ... gone in the next.
    renderer.handle_delta(&mut TexturesDelta::default());
    let error = renderer.rasterize(&shapes, [2, 2], 1.0, BLACK).unwrap_err();
    assert!(error.contains("never set"), "{error}");
    // A patch of a texture that is not there is reported, not ignored.
    set_texture(
        &mut renderer,
        Some([0, 0]),
        [1, 1],
        vec![Color32::WHITE],
        TextureOptions::NEAREST,
    );
    let error = renderer.rasterize(&shapes, [2, 2], 1.0, BLACK).unwrap_err();
    assert!(error.contains("unknown texture"), "{error}");
}

/// Pixels of `image` inside `rect` (points, at 1 pixel per point) that differ from
/// `background`.
fn marks_inside(image: &RgbaImage, rect: Rect, background: [u8; 4]) -> usize {
    image
        .enumerate_pixels()
        .filter(|(x, y, pixel)| {
            pixel.0 != background && rect.contains(pos2(*x as f32 + 0.5, *y as f32 + 0.5))
        })
        .count()
}

#[test]
fn text_is_drawn_where_egui_laid_it_out() {
    let renderer = SoftwareRenderer::default();
    let mut harness = Harness::builder()
        .with_size(Vec2::new(300.0, 120.0))
        .renderer(renderer.clone())
        .build_ui(|ui| {
            ui.add_space(40.0);
            ui.label("Heat spreads: 0123456789");
        });
    harness.run_steps(3);
    let label = harness.get_by_label("Heat spreads: 0123456789").rect();
    let image = renderer
        .render(&harness.ctx, harness.output(), BLACK)
        .unwrap();
    assert_eq!(image.dimensions(), (300, 120));
    // Below and right of the label nothing is drawn: the clear colour shows.
    let background = [0, 0, 0, 255];
    let inside = marks_inside(&image, label, background);
    assert!(inside > 100, "{inside} text pixels in {label:?}");
    let beyond = image
        .enumerate_pixels()
        .filter(|(x, y, _)| *x as f32 > label.max.x + 1.0 || *y as f32 > label.max.y + 1.0)
        .filter(|(_, _, pixel)| pixel.0 != background)
        .count();
    assert_eq!(beyond, 0, "pixels drawn beyond the label {label:?}");
    // Anti-aliased glyph edges: more than a few grey levels, from the font atlas.
    let mut levels: Vec<u8> = image.pixels().map(|p| p[0]).collect();
    levels.sort_unstable();
    levels.dedup();
    assert!(levels.len() > 20, "{} levels", levels.len());
}

/// The real app on the CPU in a 1440x900 window (as the README's screenshots) with a 512²
/// field, on `tab`, after `before` and (on the diffusion tab) "Step 10", written to
/// `$HEATLAB_RENDER_OUT/NAME.png` when that is set: what `heatlab gui --tab TAB --screenshot FILE --frames 1
/// --size 512 --window 1440x900 --backend cpu` shows (which plays one frame of 10 steps), so
/// that the two can be compared pixel by pixel.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn render_app(
    name: &str,
    tab: &str,
    before: impl FnOnce(&mut Harness<'static, HeatlabApp>),
) -> (RgbaImage, Harness<'static, HeatlabApp>) {
    let renderer = SoftwareRenderer::default();
    let mut field = Settings::default().field;
    field.size = GridSize::new(512, 512).unwrap();
    let settings = Settings {
        backend: BackendChoice::Cpu,
        field,
        tab: tab.parse().unwrap(),
        auto_steps: false,
        step_n: 10,
        ..Settings::default()
    };
    let mut harness = crate::common::app::build_app_with(
        Harness::builder().renderer(renderer.clone()),
        AppOptions {
            settings: Some(settings),
            persist: false,
            autoplay: false,
            ..AppOptions::default()
        },
        Vec2::new(1440.0, 900.0),
    );
    wait_until(&mut harness, "the field is shown", HeatlabApp::is_ready);
    if tab == "diffusion" {
        harness.get_by_label("Step 10").click();
        wait_until(&mut harness, "10 steps are shown", |app| {
            app.step_count() == 10
        });
    }
    before(&mut harness);
    // No pointer over the window (nothing hovered), as in a screenshot.
    harness.input_mut().events.push(egui::Event::PointerGone);
    harness.run_steps(4);
    let clear = eframe::App::clear_color(harness.state(), &harness.ctx.global_style().visuals);
    let image = renderer
        .render(&harness.ctx, harness.output(), clear)
        .unwrap();
    if let Some(dir) = std::env::var_os("HEATLAB_RENDER_OUT") {
        let path = std::path::Path::new(&dir).join(format!("{name}.png"));
        software_renderer::save_png(&image, &path).unwrap();
    }
    (image, harness)
}

#[test]
fn the_lab_tab_renders_with_its_text_in_its_widgets() {
    let (image, harness) = render_app("rendered-kernel-lab", "kernel-lab", |_| {});
    assert_eq!(image.dimensions(), (1440, 900));
    for label in ["Compile", "Reset to built-in", "your kernel (user_step.cu)"] {
        let rect = harness.get_by_label(label).rect();
        let centre = rect.center();
        // The button's fill, at its left edge's middle (no text there).
        let fill = *image.get_pixel(rect.min.x as u32 + 2, centre.y as u32);
        let inside = marks_inside(&image, rect.shrink(1.0), fill.0);
        assert!(inside > 30, "{label}: {inside} text pixels in {rect:?}");
    }
}

#[test]
fn the_diffusion_tab_renders_its_field_images() {
    let (image, _harness) = render_app("rendered-diffusion", "diffusion", |_| {});
    // The widgets are greys and one blue; the two field views are colour maps of many colours.
    let mut colours: Vec<[u8; 4]> = image
        .pixels()
        .filter(|p| {
            let (max, min) = (p[0].max(p[1]).max(p[2]), p[0].min(p[1]).min(p[2]));
            max - min > 60
        })
        .map(|p| p.0)
        .collect();
    let saturated = colours.len();
    colours.sort_unstable();
    colours.dedup();
    assert!(
        saturated > 100_000 && colours.len() > 1000,
        "{saturated} saturated pixels of {} colours",
        colours.len()
    );
}

#[test]
fn an_nvrtc_error_is_drawn_on_its_line_in_the_editor() {
    let line = bad_kernels::syntax_error_line();
    // The log NVRTC gave for this kernel on the H100 (tests/lab.rs checks the real one there).
    let log = format!(
        "user_step.cu({line}): error: expected a \";\"\n\n1 error detected in the \
         compilation of \"user_step.cu\".\n"
    );
    let (image, harness) = render_app("rendered-kernel-lab-nvrtc-error", "kernel-lab", |harness| {
        let lab = harness.state_mut().lab();
        lab.set_source(bad_kernels::syntax_error());
        lab.receive(LabEvent::Compiled {
            source: bad_kernels::syntax_error(),
            result: Err(CompileFailure::Nvrtc(log)),
            took: Duration::from_millis(5),
        });
        harness.run_steps(2);
        // Scrolled down as the screenshot of the lab with a compile error is.
        for _ in 0..3 {
            harness
                .get_by_label_contains(&format!("▶{line}"))
                .scroll_down();
            harness.run_steps(2);
        }
    });
    let numbers = harness.get_by_label_contains(&format!("▶{line}")).rect();
    // The marked line's red band right of the line numbers, on screen (not scrolled away):
    // rows of red-tinted pixels across the editor.
    let red_rows = (numbers.min.y as u32..(numbers.max.y as u32).min(image.height()))
        .filter(|&y| {
            let red = (numbers.max.x as u32..image.width())
                .filter(|&x| {
                    let [r, g, b, _] = image.get_pixel(x, y).0;
                    r > g.saturating_add(25) && r > b.saturating_add(25)
                })
                .count();
            red > 500
        })
        .count();
    assert!(
        (8..40).contains(&red_rows),
        "{red_rows} rows of the editor are marked red"
    );
}
