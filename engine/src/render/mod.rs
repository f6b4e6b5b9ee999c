//! Turning fields into pictures: colormaps, value ranges, previews and the labels of colorbars.
//! The heavy part (block means, mapping through a table) is `compute::preview`, which a GPU
//! backend may run on its device; this module chooses the colours and builds what is shown.

pub mod colormap;
mod colormap_tables;
pub mod contour;
pub mod flux;
pub mod frame;
pub mod label;
pub mod overlay;
pub mod preview;

pub use crate::compute::preview::lut_index;
pub use crate::compute::Layer;
pub use crate::grid::{RangeMode, ValueRange};
pub use colormap::Colormap;
pub use label::{format_value, frame_counter, simulated_time};
pub use preview::{Preview, PreviewRequest};

use crate::compute::preview::map_through_table;
use crate::grid::Grid;

/// Colormapped RGB bytes (3 per cell, row-major) of the whole field.
pub fn field_to_rgb(field: &Grid, colormap: Colormap, range: ValueRange) -> Vec<u8> {
    map_through_table(field.as_slice(), colormap.table(), range, 3)
}

/// Colormapped RGBA bytes (4 per cell, opaque), for textures.
pub fn field_to_rgba(field: &Grid, colormap: Colormap, range: ValueRange) -> Vec<u8> {
    map_through_table(field.as_slice(), colormap.table(), range, 4)
}
