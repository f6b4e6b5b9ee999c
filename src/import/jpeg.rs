//! Whether a JPEG is whole: its segments and entropy-coded data must run to the end-of-image
//! marker. A file cut short has none, and the decoder would fill its missing rows with grey
//! instead of failing, as a PNG cut short does.

/// How a JPEG falls short of its end-of-image marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JpegCut {
    /// The data ends inside a segment or the image data, at this many bytes.
    EndsEarly(usize),
    /// A segment's length is impossible (below 2) at this byte.
    BadSegment(usize),
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
        }
    }
}

/// Follows the JPEG in `bytes` from its start marker to its end-of-image marker (bytes after
/// that, such as a camera's trailer, are allowed).
pub(super) fn check_complete(bytes: &[u8]) -> Result<(), JpegCut> {
    let end = bytes.len();
    let mut at = 2; // after SOI, which the format check has seen
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
            0xD9 => return Ok(()),
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
        at += length;
        if at > end {
            return Err(JpegCut::EndsEarly(end));
        }
        if code == 0xDA {
            at = end_of_scan(bytes, at)?;
        }
    }
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
        for cut in [whole.len() - 2, whole.len() / 2, 30, 3] {
            assert!(
                matches!(check_complete(&whole[..cut]), Err(JpegCut::EndsEarly(_))),
                "cut at {cut}"
            );
        }
    }
}
