//! A software renderer for egui's output, for pictures of the app on a machine without a
//! display (the GPU machine has no X server, Xvfb or Mesa).
//!
//! It paints what egui_glow paints on a window: the frame's shapes tessellated by egui
//! ([`egui::Context::tessellate`]) into triangles, each triangle filled at the pixel centres it
//! covers (one owner for a shared edge, so feathered edges are not blended twice), its vertex
//! colours (premultiplied sRGBA, in gamma space) interpolated and multiplied by the texture's
//! colour (sampled bilinearly or nearest as its `TextureOptions` say, wrapped as they say), cut
//! by the clip rectangle (rounded to pixels like glow's scissor) and blended over what is there
//! with premultiplied alpha (`src + dst * (1 - src_alpha)`), all in gamma space on an 8-bit
//! target, as egui_glow does on a framebuffer without sRGB. Not reproduced: glow's dithering
//! (under half a level of 8 bits) and mipmaps (this app uses none).
//!
//! The textures come from every frame's `textures_delta` through egui_kittest's
//! [`TestRenderer::handle_delta`] (partial updates written at their positions, frees applied
//! after the frame that freed them, as egui asks). Plug it in with
//! `Harness::builder().renderer(renderer.clone())` and keep a clone to call
//! [`SoftwareRenderer::render`] on the harness's last output.
//!
//! Used by tests (`tests/gui/render.rs`, `tests/gui/problem/overlays.rs`) and `examples/lab_screenshots.rs`; the app never links
//! it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use eframe::egui::epaint::{ClippedPrimitive, Mesh, Primitive, Vertex};
use eframe::egui::{
    self, Color32, ImageData, TextureFilter, TextureId, TextureOptions, TextureWrapMode,
    TexturesDelta,
};
use egui_kittest::TestRenderer;
use image::RgbaImage;

/// The renderer; clones share its textures (one goes into the harness, one paints).
#[derive(Clone, Default)]
pub struct SoftwareRenderer {
    textures: Rc<RefCell<Textures>>,
}

#[derive(Default)]
struct Textures {
    images: HashMap<TextureId, Texture>,
    /// Freed by the last frame: dropped before the next frame's textures are set.
    to_free: Vec<TextureId>,
    /// A delta that could not be applied (reported by the next render).
    problem: Option<String>,
}

struct Texture {
    width: usize,
    height: usize,
    pixels: Vec<Color32>,
    options: TextureOptions,
}

impl TestRenderer for SoftwareRenderer {
    fn handle_delta(&mut self, delta: &mut TexturesDelta) {
        self.textures.borrow_mut().apply(delta);
    }
}

impl Textures {
    fn apply(&mut self, delta: &mut TexturesDelta) {
        for id in self.to_free.drain(..) {
            self.images.remove(&id);
        }
        // A texture's deltas in their order (a whole image, then patches of it).
        for (id, deltas) in delta.set.drain() {
            for image_delta in deltas {
                let ImageData::Color(image) = &image_delta.image;
                let [width, height] = image.size;
                if image.pixels.len() != width * height {
                    self.problem.get_or_insert(format!(
                        "texture {id:?}: {} pixels for {width}x{height}",
                        image.pixels.len()
                    ));
                    continue;
                }
                match image_delta.pos {
                    None => {
                        self.images.insert(
                            id,
                            Texture {
                                width,
                                height,
                                pixels: image.pixels.clone(),
                                options: image_delta.options,
                            },
                        );
                    }
                    Some([x, y]) => {
                        let Some(texture) = self.images.get_mut(&id) else {
                            self.problem
                                .get_or_insert(format!("a patch of unknown texture {id:?}"));
                            continue;
                        };
                        if x + width > texture.width || y + height > texture.height {
                            self.problem.get_or_insert(format!(
                                "a {width}x{height} patch at ({x}, {y}) outside texture {id:?} \
                                 of {}x{}",
                                texture.width, texture.height
                            ));
                            continue;
                        }
                        for row in 0..height {
                            let start = (y + row) * texture.width + x;
                            texture.pixels[start..start + width]
                                .copy_from_slice(&image.pixels[row * width..(row + 1) * width]);
                        }
                        texture.options = image_delta.options;
                    }
                }
            }
        }
        self.to_free.extend(std::mem::take(&mut delta.free));
    }
}

impl SoftwareRenderer {
    /// The pixels of the frame `output` (the harness's last), on a window cleared to
    /// `clear_color` (premultiplied, gamma space: what `eframe::App::clear_color` returns).
    pub fn render(
        &self,
        ctx: &egui::Context,
        output: &egui::FullOutput,
        clear_color: [f32; 4],
    ) -> Result<RgbaImage, String> {
        let pixels_per_point = output.pixels_per_point;
        let primitives = ctx.tessellate(output.shapes.clone(), pixels_per_point);
        let size = ctx.viewport_rect().size() * pixels_per_point;
        self.rasterize(
            &primitives,
            [size.x.round() as u32, size.y.round() as u32],
            pixels_per_point,
            clear_color,
        )
    }

    /// Paints tessellated `primitives` on a `size` (pixels) target cleared to `clear_color`.
    /// The result is opaque, as a window on a 24-bit display shows it.
    pub fn rasterize(
        &self,
        primitives: &[ClippedPrimitive],
        size: [u32; 2],
        pixels_per_point: f32,
        clear_color: [f32; 4],
    ) -> Result<RgbaImage, String> {
        let textures = self.textures.borrow();
        if let Some(problem) = &textures.problem {
            return Err(problem.clone());
        }
        let clear = [0, 1, 2].map(|c| unit_to_byte(clear_color[c]));
        let mut target = Target {
            width: size[0] as usize,
            height: size[1] as usize,
            rgb: vec![clear; size[0] as usize * size[1] as usize],
        };
        for primitive in primitives {
            let scissor = Scissor::of(primitive.clip_rect, pixels_per_point, &target);
            match &primitive.primitive {
                Primitive::Mesh(mesh) => {
                    let texture = textures.images.get(&mesh.texture_id).ok_or_else(|| {
                        format!("a mesh uses texture {:?}, never set", mesh.texture_id)
                    })?;
                    if texture.width == 0 || texture.height == 0 {
                        return Err(format!("texture {:?} is empty", mesh.texture_id));
                    }
                    target.draw_mesh(mesh, texture, scissor, pixels_per_point)?;
                }
                Primitive::Callback(_) => {
                    return Err(
                        "a paint callback (custom GPU painting) cannot be drawn here".into(),
                    )
                }
            }
        }
        let mut image = RgbaImage::new(size[0], size[1]);
        for (pixel, rgb) in image.pixels_mut().zip(&target.rgb) {
            pixel.0 = [rgb[0], rgb[1], rgb[2], 255];
        }
        Ok(image)
    }
}

fn unit_to_byte(value: f32) -> u8 {
    (value.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// The pixels that a clip rectangle lets through: `x0..x1`, `y0..y1`.
#[derive(Debug, Clone, Copy)]
struct Scissor {
    x0: usize,
    y0: usize,
    x1: usize,
    y1: usize,
}

impl Scissor {
    /// As egui_glow's `set_clip_rect`: to pixels, rounded, clamped to the target.
    fn of(clip: egui::Rect, pixels_per_point: f32, target: &Target) -> Self {
        let round = |points: f32, limit: usize| {
            ((points * pixels_per_point).round().max(0.0) as usize).min(limit)
        };
        let x0 = round(clip.min.x, target.width);
        let y0 = round(clip.min.y, target.height);
        Self {
            x0,
            y0,
            x1: round(clip.max.x, target.width).max(x0),
            y1: round(clip.max.y, target.height).max(y0),
        }
    }
}

struct Target {
    width: usize,
    height: usize,
    rgb: Vec<[u8; 3]>,
}

/// A vertex in pixels, with its colour (0-255, premultiplied) and texture coordinates.
#[derive(Clone, Copy)]
struct Corner {
    x: f64,
    y: f64,
    colour: [f32; 4],
    u: f32,
    v: f32,
}

impl Corner {
    fn of(vertex: &Vertex, pixels_per_point: f32) -> Self {
        Self {
            x: f64::from(vertex.pos.x * pixels_per_point),
            y: f64::from(vertex.pos.y * pixels_per_point),
            colour: vertex.color.to_array().map(f32::from),
            u: vertex.uv.x,
            v: vertex.uv.y,
        }
    }
}

/// The edge from `a` to `b` as a function of the pixel centre: `w(x, y) = a_x * x + a_y * y + c`,
/// positive inside; `owns_ties` says whether points on the edge itself belong to the triangle.
struct Edge {
    along_x: f64,
    along_y: f64,
    constant: f64,
    owns_ties: bool,
}

impl Edge {
    fn new(a: &Corner, b: &Corner) -> Self {
        // w(p) = cross(b - a, p - a)
        let (dx, dy) = (b.x - a.x, b.y - a.y);
        Self {
            along_x: -dy,
            along_y: dx,
            constant: dy * a.x - dx * a.y,
            // GL's top-left rule in its own window coordinates (y up; egui_glow flips y): a
            // pixel centre on a left edge or on an edge at the bottom of the screen belongs to
            // the triangle, one on a right or a screen-top edge does not (as Mesa's llvmpipe
            // paints under Xvfb). Of an edge shared by two triangles (it runs opposite ways in
            // them once both are wound alike), exactly one owns the points on it.
            owns_ties: dy < 0.0 || (dy == 0.0 && dx < 0.0),
        }
    }

    fn at(&self, x: f64, y: f64) -> f64 {
        self.along_x * x + self.along_y * y + self.constant
    }

    fn covers(&self, w: f64) -> bool {
        w > 0.0 || (w == 0.0 && self.owns_ties)
    }
}

impl Target {
    fn draw_mesh(
        &mut self,
        mesh: &Mesh,
        texture: &Texture,
        scissor: Scissor,
        pixels_per_point: f32,
    ) -> Result<(), String> {
        for triangle in mesh.indices.chunks_exact(3) {
            let corner = |index: u32| {
                mesh.vertices
                    .get(index as usize)
                    .map(|vertex| Corner::of(vertex, pixels_per_point))
                    .ok_or_else(|| {
                        format!(
                            "index {index} past the mesh's {} vertices",
                            mesh.vertices.len()
                        )
                    })
            };
            let corners = [
                corner(triangle[0])?,
                corner(triangle[1])?,
                corner(triangle[2])?,
            ];
            self.draw_triangle(corners, texture, scissor);
        }
        Ok(())
    }

    fn draw_triangle(&mut self, corners: [Corner; 3], texture: &Texture, scissor: Scissor) {
        let [a, mut b, mut c] = corners;
        let mut area = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
        if area == 0.0 || !area.is_finite() {
            return;
        }
        if area < 0.0 {
            // egui emits both windings; wind every triangle one way.
            std::mem::swap(&mut b, &mut c);
            area = -area;
        }
        // The weight of each corner is its opposite edge's function over the area.
        let edges = [Edge::new(&b, &c), Edge::new(&c, &a), Edge::new(&a, &b)];
        let corners = [a, b, c];

        let lowest = |values: [f64; 3]| values.into_iter().fold(f64::INFINITY, f64::min);
        let highest = |values: [f64; 3]| values.into_iter().fold(f64::NEG_INFINITY, f64::max);
        // Pixels whose centres (x + 0.5, y + 0.5) can be inside.
        let first = |from: f64, limit: usize| ((from - 0.5).ceil().max(0.0) as usize).min(limit);
        let last = |to: f64, limit: usize| ((to - 0.5).floor() + 1.0).max(0.0).min(limit as f64);
        let x_from = first(lowest([a.x, b.x, c.x]), scissor.x1).max(scissor.x0);
        let x_to = (last(highest([a.x, b.x, c.x]), scissor.x1) as usize).max(x_from);
        let y_from = first(lowest([a.y, b.y, c.y]), scissor.y1).max(scissor.y0);
        let y_to = (last(highest([a.y, b.y, c.y]), scissor.y1) as usize).max(y_from);
        if x_from >= x_to || y_from >= y_to {
            return;
        }

        let sampler = Sampler::new(&corners, area, texture);
        for py in y_from..y_to {
            let y = py as f64 + 0.5;
            // The span of this row where every edge function can be >= 0 (one pixel of slack
            // each side; the exact test follows per pixel).
            let (mut span_from, mut span_to) = (x_from as f64, x_to as f64);
            for edge in &edges {
                let at_zero = edge.along_y * y + edge.constant;
                if edge.along_x > 0.0 {
                    span_from = span_from.max((-at_zero / edge.along_x - 0.5).floor() - 1.0);
                } else if edge.along_x < 0.0 {
                    span_to = span_to.min((-at_zero / edge.along_x - 0.5).ceil() + 2.0);
                } else if at_zero < 0.0 {
                    span_to = span_from;
                }
            }
            if span_from >= span_to {
                continue;
            }
            let (span_from, span_to) = (span_from as usize, span_to as usize);
            let row = py * self.width;
            for px in span_from..span_to {
                let x = px as f64 + 0.5;
                let w = [edges[0].at(x, y), edges[1].at(x, y), edges[2].at(x, y)];
                if !(edges[0].covers(w[0]) && edges[1].covers(w[1]) && edges[2].covers(w[2])) {
                    continue;
                }
                let weights = w.map(|w| (w / area) as f32);
                let source = sampler.fragment(&corners, weights);
                blend(&mut self.rgb[row + px], source);
            }
        }
    }
}

/// A triangle's texture lookups: one filter for the whole triangle (minification where a pixel
/// spans more than a texel, as GL decides per pixel from the same affine derivatives).
struct Sampler<'a> {
    texture: &'a Texture,
    filter: TextureFilter,
    /// The colour of a triangle whose corners share one texture coordinate (solid shapes).
    constant: Option<[f32; 4]>,
}

impl<'a> Sampler<'a> {
    fn new(corners: &[Corner; 3], area: f64, texture: &'a Texture) -> Self {
        let [a, b, c] = corners;
        if a.u == b.u && a.u == c.u && a.v == b.v && a.v == c.v {
            let filter = texture.options.magnification;
            return Self {
                texture,
                filter,
                constant: Some(texture.sample(a.u, a.v, filter)),
            };
        }
        // d(u, v)/d(x, y) of the affine map, in texels per pixel.
        let area = area as f32;
        let (e1x, e1y) = ((b.x - a.x) as f32, (b.y - a.y) as f32);
        let (e2x, e2y) = ((c.x - a.x) as f32, (c.y - a.y) as f32);
        let derivative = |da: f32, db: f32| {
            // value(p) = value(a) + s * da + t * db where p - a = s * e1 + t * e2
            let per_x = (da * e2y - db * e1y) / area;
            let per_y = (db * e1x - da * e2x) / area;
            (per_x, per_y)
        };
        let (du_dx, du_dy) = derivative(b.u - a.u, c.u - a.u);
        let (dv_dx, dv_dy) = derivative(b.v - a.v, c.v - a.v);
        let (w, h) = (texture.width as f32, texture.height as f32);
        let scale = (du_dx * w)
            .hypot(dv_dx * h)
            .max((du_dy * w).hypot(dv_dy * h));
        let filter = if scale > 1.0 {
            texture.options.minification
        } else {
            texture.options.magnification
        };
        Self {
            texture,
            filter,
            constant: None,
        }
    }

    /// The premultiplied colour (0-1) of a pixel with these corner weights.
    fn fragment(&self, corners: &[Corner; 3], weights: [f32; 3]) -> [f32; 4] {
        let mix = |value: fn(&Corner) -> f32| {
            weights[0] * value(&corners[0])
                + weights[1] * value(&corners[1])
                + weights[2] * value(&corners[2])
        };
        let texel = self
            .constant
            .unwrap_or_else(|| self.texture.sample(mix(|c| c.u), mix(|c| c.v), self.filter));
        let colour = [
            mix(|c| c.colour[0]),
            mix(|c| c.colour[1]),
            mix(|c| c.colour[2]),
            mix(|c| c.colour[3]),
        ];
        [0, 1, 2, 3].map(|i| (colour[i] / 255.0 * texel[i]).clamp(0.0, 1.0))
    }
}

impl Texture {
    /// The texel colour (premultiplied, 0-1) at normalised coordinates, as GL samples it.
    fn sample(&self, u: f32, v: f32, filter: TextureFilter) -> [f32; 4] {
        let mode = self.options.wrap_mode;
        let texel = |x: i64, y: i64| {
            let x = wrap(x, self.width, mode);
            let y = wrap(y, self.height, mode);
            self.pixels[y * self.width + x].to_array().map(f32::from)
        };
        let (x, y) = (u * self.width as f32, v * self.height as f32);
        let texel_colour = match filter {
            TextureFilter::Nearest => texel(x.floor() as i64, y.floor() as i64),
            TextureFilter::Linear => {
                let (x, y) = (x - 0.5, y - 0.5);
                let (x0, y0) = (x.floor(), y.floor());
                let (fx, fy) = (x - x0, y - y0);
                let (x0, y0) = (x0 as i64, y0 as i64);
                let top = lerp(texel(x0, y0), texel(x0 + 1, y0), fx);
                let bottom = lerp(texel(x0, y0 + 1), texel(x0 + 1, y0 + 1), fx);
                lerp(top, bottom, fy)
            }
        };
        texel_colour.map(|channel| channel / 255.0)
    }
}

fn lerp(a: [f32; 4], b: [f32; 4], t: f32) -> [f32; 4] {
    [0, 1, 2, 3].map(|i| a[i] + (b[i] - a[i]) * t)
}

/// A texel index inside `0..size` as the wrap mode maps it.
fn wrap(index: i64, size: usize, mode: TextureWrapMode) -> usize {
    let size = size as i64;
    let wrapped = match mode {
        TextureWrapMode::ClampToEdge => index.clamp(0, size - 1),
        TextureWrapMode::Repeat => index.rem_euclid(size),
        TextureWrapMode::MirroredRepeat => {
            let m = index.rem_euclid(2 * size);
            if m >= size {
                2 * size - 1 - m
            } else {
                m
            }
        }
    };
    wrapped as usize
}

/// Premultiplied "over" on the 8-bit target: `dst = src + dst * (1 - src_alpha)`.
fn blend(pixel: &mut [u8; 3], source: [f32; 4]) {
    let keep = 1.0 - source[3];
    for channel in 0..3 {
        let below = f32::from(pixel[channel]) / 255.0;
        pixel[channel] = unit_to_byte(source[channel] + below * keep);
    }
}

/// Saves `image` (opaque) as an RGB PNG through heatlab's atomic PNG writer.
pub fn save_png(image: &RgbaImage, path: &std::path::Path) -> heatlab_engine::Result<()> {
    let rgb: Vec<u8> = image.pixels().flat_map(|p| [p[0], p[1], p[2]]).collect();
    heatlab_engine::export::write_png_rgb(
        path,
        image.width() as usize,
        image.height() as usize,
        &rgb,
    )
}
