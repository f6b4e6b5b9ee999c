//! Whether a JPEG is whole: its segments and entropy-coded data must run to the end-of-image
//! marker, and the data must be long enough for the size its frame header claims. A file cut
//! short fails the first, a small file claiming a huge image (a decompression bomb) the
//! second; the decoder would fill what is missing with grey instead of failing, as a PNG cut
//! short does.
//!
//! The bound: every 8x8 block of the full-resolution component has a DC code of at least one
//! bit in some scan (Huffman coding, the only coding the decoder reads), so the image data
//! holds at least one bit per block.

/// How a JPEG falls short of its end-of-image marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JpegCut {
    /// The data ends inside a segment or the image data, at this many bytes.
    EndsEarly(usize),
    /// A segment's length is impossible (below 2) at this byte.
    BadSegment(usize),
    /// The image data is shorter than the size in the frame header allows.
    TooShort {
        /// Bytes of image data.
        data: usize,
        /// The frame header's width.
        width: u16,
        /// The frame header's height.
        height: u16,
    },
}

impl std::fmt::Display for JpegCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EndsEarly(at) => write!(
                f,
                "is a JPEG cut short: its data ends after {at} bytes, before the image's end marker"
            ),
            Self::BadSegment(at) => {
                write!(f, "is a damaged JPEG: a bad segment length at byte {at}")
            }
            Self::TooShort {
                data,
                width,
                height,
            } => write!(
                f,
                "is a JPEG whose {data} bytes of image data cannot hold the {width}x{height} \
                 pixels its header claims (cut short or damaged)"
            ),
        }
    }
}

/// Follows the JPEG in `bytes` from its start marker to its end-of-image marker (bytes after
/// that, such as a camera's trailer, are allowed), adding up its image data.
pub(super) fn check_complete(bytes: &[u8]) -> Result<(), JpegCut> {
    let end = bytes.len();
    let mut at = 2; // after SOI, which the format check has seen
    let mut frame = None;
    let mut data = 0;
    loop {
        // A marker: 0xFF (any number of fill bytes), then its code.
        while at < end && bytes[at] != 0xFF {
            at += 1;
        }
        while at < end && bytes[at] == 0xFF {
            at += 1;
        }
        let Some(&code) = bytes.get(at) else {
            return Err(JpegCut::EndsEarly(end));
        };
        at += 1;
        match code {
            0xD9 => return check_data_length(frame, data),
            // Standalone markers: restart, TEM, a second SOI.
            0xD0..=0xD8 | 0x01 => continue,
            _ => {}
        }
        let Some(length) = bytes.get(at..at + 2) else {
            return Err(JpegCut::EndsEarly(end));
        };
        let length = usize::from(u16::from_be_bytes([length[0], length[1]]));
        if length < 2 {
            return Err(JpegCut::BadSegment(at));
        }
        if is_frame_header(code) {
            // Length, precision, then height and width.
            if let Some(size) = bytes.get(at + 3..at + 7) {
                let height = u16::from_be_bytes([size[0], size[1]]);
                let width = u16::from_be_bytes([size[2], size[3]]);
                frame = Some((width, height));
            }
        }
        at += length;
        if at > end {
            return Err(JpegCut::EndsEarly(end));
        }
        if code == 0xDA {
            let scan_end = end_of_scan(bytes, at)?;
            data += scan_end - at;
            at = scan_end;
        }
    }
}

/// SOF0-3, 5-7, 9-11, 13-15 (0xC4 is DHT, 0xC8 reserved, 0xCC DAC).
fn is_frame_header(code: u8) -> bool {
    matches!(code, 0xC0..=0xCF) && !matches!(code, 0xC4 | 0xC8 | 0xCC)
}

/// At least one bit of image data per 8x8 block (see the module's documentation). A height
/// of 0 (given later by a DNL marker) is not checked.
fn check_data_length(frame: Option<(u16, u16)>, data: usize) -> Result<(), JpegCut> {
    let Some((width, height)) = frame else {
        return Ok(());
    };
    let blocks = usize::from(width).div_ceil(8) * usize::from(height).div_ceil(8);
    if data.saturating_mul(8) < blocks {
        return Err(JpegCut::TooShort {
            data,
            width,
            height,
        });
    }
    Ok(())
}

/// The offset of the marker that ends the entropy-coded data starting at `at` (0xFF 0x00 is a
/// stuffed byte and 0xFF 0xD0-D7 a restart marker, both inside the data).
fn end_of_scan(bytes: &[u8], mut at: usize) -> Result<usize, JpegCut> {
    loop {
        let Some(offset) = bytes[at..].iter().position(|&b| b == 0xFF) else {
            return Err(JpegCut::EndsEarly(bytes.len()));
        };
        let marker = at + offset;
        match bytes.get(marker + 1) {
            None => return Err(JpegCut::EndsEarly(bytes.len())),
            Some(0x00 | 0xD0..=0xD7) => at = marker + 2,
            Some(0xFF) => at = marker + 1,
            Some(_) => return Ok(marker),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jpeg() -> Vec<u8> {
        let pixels: Vec<u8> = (0..48 * 40 * 3).map(|i| (i * 7 % 251) as u8).collect();
        let mut bytes = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 90)
            .encode(&pixels, 48, 40, image::ExtendedColorType::Rgb8)
            .unwrap();
        bytes
    }

    #[test]
    fn a_whole_jpeg_passes_and_a_cut_one_does_not() {
        let whole = jpeg();
        assert_eq!(check_complete(&whole), Ok(()));
        let mut trailer = whole.clone();
        trailer.extend_from_slice(b"camera trailer");
        assert_eq!(check_complete(&trailer), Ok(()));
        // The frame header claims 20000 x 20000 pixels: the data holds a few hundred blocks.
        let mut bomb = whole.clone();
        let sof = bomb.windows(2).position(|w| w == [0xFF, 0xC0]).unwrap();
        bomb[sof + 5..sof + 9].copy_from_slice(&[0x4E, 0x20, 0x4E, 0x20]);
        assert!(matches!(
            check_complete(&bomb),
            Err(JpegCut::TooShort {
                width: 20000,
                height: 20000,
                ..
            })
        ));
        for cut in [whole.len() - 2, whole.len() / 2, 30, 3] {
            assert!(
                matches!(check_complete(&whole[..cut]), Err(JpegCut::EndsEarly(_))),
                "cut at {cut}"
            );
        }
    }
}
