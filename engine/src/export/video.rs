//! Videos of a run: GIF (encoded here, a palette chosen per frame by NeuQuant) and MP4 (H.264,
//! through `ffmpeg` when it is on `PATH`: raw RGB frames piped to its standard input).
//!
//! Frames are the pictures of [`super::frame::compose_frame`] (field, Laplacian or both side by
//! side, colorbars and a step counter when asked), the same pictures a PNG recording writes, but
//! for their size: a field larger than the frame's side is reduced by block means, one smaller
//! than half of it enlarged to whole pixels a cell within it. The video's size is fixed by its first frame; a later frame of another size (a colorbar
//! whose labels grew) is padded with white or cropped to it. MP4 sizes are rounded up to even
//! numbers, as H.264 in 4:2:0 needs.
//!
//! The file is written atomically: frames go to a listed temporary file beside the target,
//! renamed into place by [`VideoWriter::finish`], so a recording stopped early (a stop, a
//! signal) is finished as a shorter, playable video, and a failed one leaves no temporary file
//! and the old file untouched. ffmpeg runs in its own process group, so that the Ctrl-C of a
//! terminal reaches heatlab alone and heatlab closes the video. Every ffmpeg process is listed
//! while it runs, so that a command that must stop can stop it rather than leave it behind
//! ([`super::ffmpeg`]).

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};

pub use super::ffmpeg::{ffmpeg_available, stop_live_encoders};
use super::ffmpeg::{locked, spawn_listed, stop_and_reap, wait_reaped};

use super::atomic::{check_output, AtomicFile};
use super::frame::{compose_frame, LayerFrame, PngStyle, ShownLayers};
use crate::compute::preview::{block_mean, reduction_factor};
use crate::compute::Layer;
use crate::error::{HeatlabError, Result};
use crate::grid::Grid;
use crate::render::frame_counter;

/// The container and codec of a video, from the file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum VideoFormat {
    /// An animated GIF, encoded by heatlab.
    Gif,
    /// MP4 with H.264, encoded by ffmpeg.
    Mp4,
}

impl VideoFormat {
    /// Every format, in the order a selector lists them.
    pub const ALL: [Self; 2] = [Self::Gif, Self::Mp4];

    /// The format a file name asks for.
    pub fn of_path(path: &Path) -> Result<Self> {
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("gif") => Ok(Self::Gif),
            Some("mp4") => Ok(Self::Mp4),
            _ => Err(HeatlabError::InvalidInput(format!(
                "{}: a video is a .gif or an .mp4 file",
                path.display()
            ))),
        }
    }

    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Gif => "gif",
            Self::Mp4 => "mp4",
        }
    }
}

impl fmt::Display for VideoFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Gif => "GIF",
            Self::Mp4 => "MP4 (H.264)",
        })
    }
}

/// How a recording draws its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FrameLook {
    /// Field, Laplacian or both.
    pub layers: ShownLayers,
    /// A colorbar beside each layer.
    pub colorbar: bool,
    /// "step N" written below (with the simulated time of a heat problem: "t = 12.500 s ·
    /// step N").
    pub step_counter: bool,
    /// Layers larger than this (in cells, either side) are reduced by block means to fit.
    pub max_side: usize,
}

impl FrameLook {
    /// Which of field and Laplacian the frames need.
    pub fn needs(&self) -> (bool, bool) {
        let layers = self.layers.layers();
        (
            layers.contains(&Layer::Field),
            layers.contains(&Layer::Laplacian),
        )
    }
}

/// The picture of one video frame: `layers` (already styled, at full resolution) reduced to
/// fit `look.max_side`, or a small field enlarged to whole pixels a cell within it, side by
/// side, with the counter when asked: the step, and `seconds` simulated when the run is a heat
/// problem's.
pub fn video_frame(
    layers: &[LayerFrame<'_>],
    step: u64,
    seconds: Option<f64>,
    look: &FrameLook,
) -> Result<(Vec<u8>, usize, usize)> {
    let reduced: Vec<Grid> = layers
        .iter()
        .map(|frame| {
            let side = look.max_side.max(1);
            let size = frame.grid.size();
            let longer = size.rows.max(size.cols).max(1);
            match side / longer {
                0 | 1 => block_mean(frame.grid, reduction_factor(size, (side, side))),
                factor => enlarged(frame.grid, factor),
            }
        })
        .collect();
    let styled: Vec<LayerFrame<'_>> = layers
        .iter()
        .zip(&reduced)
        .map(|(frame, grid)| LayerFrame {
            grid,
            style: PngStyle {
                colorbar: look.colorbar,
                ..frame.style
            },
            ..*frame
        })
        .collect();
    let caption = look.step_counter.then(|| frame_counter(step, seconds));
    compose_frame(&styled, caption.as_deref())
}

/// Each cell of `grid` as a square of `factor x factor` cells (nearest neighbour).
fn enlarged(grid: &Grid, factor: usize) -> Grid {
    let size = grid.size();
    let big = crate::grid::GridSize {
        rows: size.rows * factor,
        cols: size.cols * factor,
    };
    Grid::from_fn(big, |row, col| grid.get(row / factor, col / factor))
}

/// The one line said when MP4 cannot be made here.
pub const NO_FFMPEG: &str = "MP4 needs ffmpeg on PATH, and it was not found or did not answer \
     `ffmpeg -version` within 5 s (install it, e.g. apt-get install ffmpeg); record a .gif \
     instead, or PNG frames";

/// What a finished video holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VideoSummary {
    /// The file.
    pub path: PathBuf,
    /// Frames written.
    pub frames: u64,
    /// Width and height in pixels.
    pub size: (usize, usize),
}

/// A video being written, one frame at a time.
pub struct VideoWriter {
    path: PathBuf,
    format: VideoFormat,
    fps: u32,
    frames: u64,
    /// Width and height, fixed by the first frame.
    size: Option<(usize, usize)>,
    encoder: Option<Encoder>,
}

enum Encoder {
    Gif(Box<gif::Encoder<AtomicFile>>),
    Mp4(Ffmpeg),
}

/// An ffmpeg process writing the temporary file of `file`.
struct Ffmpeg {
    /// Shared with the list of live encoders, which may stop it.
    child: Arc<Mutex<Child>>,
    stdin: Option<ChildStdin>,
    stderr: Option<ChildStderr>,
    /// Taken out when the video is committed (a regular file: ffmpeg writes its temporary).
    file: Option<AtomicFile>,
    /// The thread copying ffmpeg's output into a stream, device or FIFO target.
    copier: Option<std::thread::JoinHandle<std::io::Result<AtomicFile>>>,
}

impl Drop for Ffmpeg {
    fn drop(&mut self) {
        // An abandoned recording: close the pipe and reap the process (a reaped one is left
        // as it is); the temporary file goes with `file`.
        self.stdin = None;
        if self.file.is_some() || self.copier.is_some() {
            stop_and_reap(&self.child);
        } else {
            let _ = wait_reaped(&self.child);
        }
    }
}

impl VideoWriter {
    /// Checks `path` (a .gif or .mp4 that can be written; ffmpeg for MP4) and prepares a
    /// video of `fps` frames per second. Nothing is written before the first frame.
    pub fn create(path: &Path, fps: u32) -> Result<Self> {
        let format = VideoFormat::of_path(path)?;
        if !(1..=100).contains(&fps) {
            return Err(HeatlabError::InvalidInput(format!(
                "frames per second must be between 1 and 100, got {fps}"
            )));
        }
        if format == VideoFormat::Mp4 && !ffmpeg_available() {
            return Err(HeatlabError::Unsupported(NO_FFMPEG.into()));
        }
        check_output(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            format,
            fps,
            frames: 0,
            size: None,
            encoder: None,
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Adds a frame of RGB pixels (`width * height * 3` bytes, row-major).
    pub fn add_frame(&mut self, rgb: &[u8], width: usize, height: usize) -> Result<()> {
        if rgb.len() != width * height * 3 || width == 0 || height == 0 {
            return Err(HeatlabError::Internal(format!(
                "{} bytes is not a {width}x{height} RGB frame",
                rgb.len()
            )));
        }
        let (video_width, video_height) = *self.size.get_or_insert_with(|| match self.format {
            VideoFormat::Gif => (width, height),
            VideoFormat::Mp4 => (width.next_multiple_of(2), height.next_multiple_of(2)),
        });
        let fitted;
        let pixels = if (width, height) == (video_width, video_height) {
            rgb
        } else {
            fitted = fit(rgb, width, height, video_width, video_height);
            &fitted
        };
        if self.encoder.is_none() {
            self.encoder = Some(self.start(video_width, video_height)?);
        }
        let path = self.path.clone();
        let delay = (100 / self.fps).max(1) as u16;
        match self.encoder.as_mut() {
            Some(Encoder::Gif(encoder)) => {
                let mut frame =
                    gif::Frame::from_rgb_speed(video_width as u16, video_height as u16, pixels, 10);
                frame.delay = delay;
                encoder
                    .write_frame(&frame)
                    .map_err(|e| gif_error(&path, e))?;
            }
            Some(Encoder::Mp4(ffmpeg)) => {
                let written = match ffmpeg.stdin.as_mut() {
                    Some(stdin) => stdin.write_all(pixels),
                    None => Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
                };
                if let Err(error) = written {
                    let reason = ffmpeg_failure(ffmpeg, &error.to_string());
                    return Err(encode_error(&path, reason));
                }
            }
            None => {}
        }
        self.frames += 1;
        Ok(())
    }

    fn start(&self, width: usize, height: usize) -> Result<Encoder> {
        let file = AtomicFile::create(&self.path)?;
        match self.format {
            VideoFormat::Gif => {
                let (w, h) = (
                    u16::try_from(width).map_err(|_| too_large(&self.path))?,
                    u16::try_from(height).map_err(|_| too_large(&self.path))?,
                );
                let mut encoder =
                    gif::Encoder::new(file, w, h, &[]).map_err(|e| gif_error(&self.path, e))?;
                encoder
                    .set_repeat(gif::Repeat::Infinite)
                    .map_err(|e| gif_error(&self.path, e))?;
                Ok(Encoder::Gif(Box::new(encoder)))
            }
            VideoFormat::Mp4 => {
                // A regular file: ffmpeg writes the temporary file itself. A stream, device or
                // FIFO: ffmpeg writes a fragmented MP4 (playable without seeking back) to its
                // standard output, copied into the target by a thread.
                let temporary = file.temporary_path().map(Path::to_path_buf);
                let mut command = Command::new("ffmpeg");
                command
                    .args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y"])
                    .args(["-f", "rawvideo", "-pix_fmt", "rgb24"])
                    .args(["-s", &format!("{width}x{height}")])
                    .args(["-framerate", &self.fps.to_string(), "-i", "pipe:0"])
                    .args(["-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "18"])
                    .stdin(Stdio::piped())
                    .stderr(Stdio::piped());
                match &temporary {
                    Some(output) => command
                        .args(["-movflags", "+faststart", "-f", "mp4"])
                        .arg(output)
                        .stdout(Stdio::null()),
                    None => command
                        .args([
                            "-movflags",
                            "frag_keyframe+empty_moov",
                            "-f",
                            "mp4",
                            "pipe:1",
                        ])
                        .stdout(Stdio::piped()),
                };
                #[cfg(unix)]
                {
                    // Its own process group: a terminal's Ctrl-C stops heatlab, which then
                    // closes the video, instead of killing ffmpeg in the middle of it.
                    use std::os::unix::process::CommandExt;
                    command.process_group(0);
                }
                let child = spawn_listed(command)
                    .map_err(|e| encode_error(&self.path, format!("cannot start ffmpeg: {e}")))?;
                let (stdin, stdout, stderr) = {
                    let mut child = locked(&child);
                    (child.stdin.take(), child.stdout.take(), child.stderr.take())
                };
                let (file, copier) = match (&temporary, stdout) {
                    (None, Some(mut out)) => {
                        let mut file = file;
                        let copier = std::thread::Builder::new()
                            .name("heatlab-ffmpeg-out".into())
                            .spawn(move || std::io::copy(&mut out, &mut file).map(|_| file))
                            .map_err(|e| {
                                encode_error(&self.path, format!("cannot start a thread: {e}"))
                            })?;
                        (None, Some(copier))
                    }
                    _ => (Some(file), None),
                };
                Ok(Encoder::Mp4(Ffmpeg {
                    child,
                    stdin,
                    stderr,
                    file,
                    copier,
                }))
            }
        }
    }

    /// Finishes the video and moves it into place; a video of no frames is an error (and no
    /// file).
    pub fn finish(mut self) -> Result<VideoSummary> {
        let path = self.path.clone();
        let size = self.size.unwrap_or((0, 0));
        match self.encoder.take() {
            None => Err(HeatlabError::InvalidInput(format!(
                "{}: no frame was recorded",
                path.display()
            ))),
            Some(Encoder::Gif(encoder)) => {
                let file = encoder
                    .into_inner()
                    .map_err(|e| HeatlabError::io("writing", &path, e))?;
                file.commit()?;
                Ok(VideoSummary {
                    path,
                    frames: self.frames,
                    size,
                })
            }
            Some(Encoder::Mp4(mut ffmpeg)) => {
                ffmpeg.stdin = None;
                let output = wait_reaped(&ffmpeg.child)
                    .map_err(|e| encode_error(&path, format!("waiting for ffmpeg: {e}")))?;
                if !output.success() {
                    let reason = ffmpeg_failure(&mut ffmpeg, &format!("ffmpeg {output}"));
                    return Err(encode_error(&path, reason));
                }
                // The process is reaped; the file is ffmpeg's finished output.
                if let Some(file) = ffmpeg.file.take() {
                    file.commit()?;
                }
                if let Some(copier) = ffmpeg.copier.take() {
                    let file = copier
                        .join()
                        .map_err(|_| {
                            HeatlabError::Internal("the copy of ffmpeg's output panicked".into())
                        })?
                        .map_err(|e| HeatlabError::io("writing", &path, e))?;
                    file.commit()?;
                }
                Ok(VideoSummary {
                    path,
                    frames: self.frames,
                    size,
                })
            }
        }
    }
}

/// What ffmpeg said on its standard error (it is closed first, so it cannot block).
fn ffmpeg_failure(ffmpeg: &mut Ffmpeg, fallback: &str) -> String {
    use std::io::Read;
    ffmpeg.stdin = None;
    let _ = wait_reaped(&ffmpeg.child);
    let mut said = String::new();
    if let Some(mut stderr) = ffmpeg.stderr.take() {
        let _ = stderr.read_to_string(&mut said);
    }
    let said = said.trim();
    if said.is_empty() {
        fallback.to_string()
    } else {
        format!("ffmpeg: {said}")
    }
}

/// A frame of another size, padded with white or cropped to `width x height`.
fn fit(rgb: &[u8], from_w: usize, from_h: usize, width: usize, height: usize) -> Vec<u8> {
    let mut out = vec![255u8; width * height * 3];
    let copy_w = from_w.min(width) * 3;
    for y in 0..from_h.min(height) {
        out[y * width * 3..y * width * 3 + copy_w]
            .copy_from_slice(&rgb[y * from_w * 3..y * from_w * 3 + copy_w]);
    }
    out
}

fn gif_error(path: &Path, error: gif::EncodingError) -> HeatlabError {
    match error {
        gif::EncodingError::Io(io) => HeatlabError::io("writing", path, io),
        other => encode_error(path, other.to_string()),
    }
}

fn encode_error(path: &Path, message: String) -> HeatlabError {
    HeatlabError::Encode {
        path: path.to_path_buf(),
        message,
    }
}

fn too_large(path: &Path) -> HeatlabError {
    encode_error(path, "a GIF is at most 65535 pixels wide and high".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(width: usize, height: usize, shade: u8) -> Vec<u8> {
        (0..width * height)
            .flat_map(|i| [shade, (i % 251) as u8, 255 - shade])
            .collect()
    }

    #[test]
    fn a_gif_decodes_to_its_frames() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.gif");
        let mut video = VideoWriter::create(&path, 10).unwrap();
        for i in 0..4 {
            video.add_frame(&frame(33, 20, i * 60), 33, 20).unwrap();
        }
        // A wider frame is cropped to the first one's size.
        video.add_frame(&frame(40, 20, 0), 40, 20).unwrap();
        assert!(!path.exists(), "the file appears only when finished");
        let summary = video.finish().unwrap();
        assert_eq!((summary.frames, summary.size), (5, (33, 20)));
        let mut options = gif::DecodeOptions::new();
        options.set_color_output(gif::ColorOutput::RGBA);
        let mut decoder = options
            .read_info(std::fs::File::open(&path).unwrap())
            .unwrap();
        assert_eq!((decoder.width(), decoder.height()), (33, 20));
        let mut frames = 0;
        while let Some(frame) = decoder.read_next_frame().unwrap() {
            assert_eq!(frame.delay, 10);
            frames += 1;
        }
        assert_eq!(frames, 5);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left");
    }

    #[test]
    fn small_fields_are_enlarged_within_the_frame_size_and_large_ones_reduced() {
        let look = FrameLook {
            layers: ShownLayers::Field,
            colorbar: false,
            step_counter: false,
            max_side: 512,
        };
        let frame = |rows: usize, cols: usize| {
            let grid = Grid::from_fn(crate::grid::GridSize { rows, cols }, |r, c| {
                (r * cols + c) as f32
            });
            let style = PngStyle {
                colormap: crate::render::Colormap::Viridis,
                range: crate::grid::ValueRange {
                    min: 0.0,
                    max: (rows * cols) as f32,
                },
                colorbar: false,
                unit: None,
                cell_pixels: None,
            };
            let layers = [LayerFrame {
                layer: crate::compute::Layer::Field,
                grid: &grid,
                style,
            }];
            let (rgb, w, h) = video_frame(&layers, 0, None, &look).unwrap();
            assert_eq!(rgb.len(), w * h * 3);
            (w, h)
        };
        // A fin of 2x120 cells at 4 pixels a cell; a heat sink of 50x80 at 6.
        assert_eq!(frame(2, 120), (480, 8));
        assert_eq!(frame(50, 80), (480, 300));
        assert_eq!(frame(300, 200), (200, 300));
        assert_eq!(frame(1024, 600), (300, 512));
    }

    #[test]
    fn an_abandoned_video_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.gif");
        let mut video = VideoWriter::create(&path, 10).unwrap();
        video.add_frame(&frame(8, 8, 0), 8, 8).unwrap();
        drop(video);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert!(VideoWriter::create(&dir.path().join("v.avi"), 10).is_err());
        assert!(VideoWriter::create(&path, 0).is_err());
        let empty = VideoWriter::create(&path, 10).unwrap();
        assert!(empty.finish().unwrap_err().to_string().contains("no frame"));
    }
}
