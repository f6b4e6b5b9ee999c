//! A small CUDA C highlighter for the Kernel lab's editor: comments, preprocessor lines,
//! strings, numbers, C and CUDA keywords and types, each in its colour, and whole lines marked
//! (NVRTC's errors) with a background. Enough for one kernel file; no grammar.

use std::collections::BTreeMap;

use eframe::egui::text::{LayoutJob, TextFormat};
use eframe::egui::{Color32, FontId};

/// What a piece of source is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A `//` or `/* */` comment.
    Comment,
    /// A `#define` or other preprocessor line.
    Preprocessor,
    /// A string or character literal.
    Literal,
    /// A number.
    Number,
    /// A C keyword or a CUDA qualifier (`__global__`, `__shared__`, ...).
    Keyword,
    /// A type (`float`, `int`, `size_t`, ...).
    Type,
    /// A CUDA built-in variable or function (`threadIdx`, `__syncthreads`, ...).
    Builtin,
    /// Anything else.
    Plain,
}

const KEYWORDS: &[&str] = &[
    "if",
    "else",
    "for",
    "while",
    "do",
    "return",
    "break",
    "continue",
    "switch",
    "case",
    "default",
    "const",
    "static",
    "extern",
    "inline",
    "struct",
    "typedef",
    "template",
    "typename",
    "sizeof",
    "goto",
    "volatile",
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "__constant__",
    "__restrict__",
    "__forceinline__",
    "__noinline__",
];
const TYPES: &[&str] = &[
    "void", "float", "double", "int", "unsigned", "long", "short", "char", "bool", "size_t",
    "float2", "float4", "int2", "int4", "dim3", "uint32_t", "int64_t",
];
const BUILTINS: &[&str] = &[
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "__syncthreads",
    "__ldg",
    "__shfl_sync",
    "__shfl_up_sync",
    "__shfl_down_sync",
    "min",
    "max",
    "fabsf",
    "atomicAdd",
];

/// The kind of an identifier.
fn word_kind(word: &str) -> TokenKind {
    if KEYWORDS.contains(&word) {
        TokenKind::Keyword
    } else if TYPES.contains(&word) {
        TokenKind::Type
    } else if BUILTINS.contains(&word) {
        TokenKind::Builtin
    } else {
        TokenKind::Plain
    }
}

/// Splits `source` into pieces with their kinds; the pieces cover the text exactly, and none
/// spans a line break (so that lines can be marked).
pub fn tokenize(source: &str) -> Vec<(TokenKind, &str)> {
    let mut tokens = Vec::new();
    let mut in_block_comment = false;
    for line in source.split_inclusive('\n') {
        let mut rest = line;
        if !in_block_comment && line.trim_start().starts_with('#') {
            // A preprocessor line, up to a trailing comment.
            let end = line.find("//").unwrap_or(line.len());
            tokens.push((TokenKind::Preprocessor, &line[..end]));
            rest = &line[end..];
        }
        while !rest.is_empty() {
            if in_block_comment {
                let end = rest.find("*/").map_or(rest.len(), |i| i + 2);
                in_block_comment = end == rest.len() && !rest.ends_with("*/");
                tokens.push((TokenKind::Comment, &rest[..end]));
                rest = &rest[end..];
                continue;
            }
            let first = rest.chars().next().unwrap_or(' ');
            let (kind, len) = if rest.starts_with("//") {
                (TokenKind::Comment, rest.len())
            } else if let Some(after) = rest.strip_prefix("/*") {
                in_block_comment = true;
                match after.find("*/") {
                    Some(i) => {
                        in_block_comment = false;
                        (TokenKind::Comment, i + 4)
                    }
                    None => (TokenKind::Comment, rest.len()),
                }
            } else if first == '"' || first == '\'' {
                let end = rest[1..]
                    .find(first)
                    .map_or(rest.len(), |i| (i + 2).min(rest.len()));
                (TokenKind::Literal, end)
            } else if first.is_ascii_digit() {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
                    .unwrap_or(rest.len());
                (TokenKind::Number, end)
            } else if first.is_alphabetic() || first == '_' {
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                (word_kind(&rest[..end]), end)
            } else {
                let end = rest
                    .find(|c: char| {
                        c.is_alphanumeric() || c == '_' || c == '"' || c == '\'' || c == '/'
                    })
                    .filter(|&i| i > 0)
                    .unwrap_or(first.len_utf8());
                (TokenKind::Plain, end)
            };
            tokens.push((kind, &rest[..len]));
            rest = &rest[len..];
        }
    }
    tokens
}

/// The colour of a kind, for a dark or a light theme.
fn color(kind: TokenKind, dark: bool) -> Color32 {
    match (kind, dark) {
        (TokenKind::Comment, true) => Color32::from_rgb(110, 150, 110),
        (TokenKind::Comment, false) => Color32::from_rgb(60, 120, 60),
        (TokenKind::Preprocessor, true) => Color32::from_rgb(200, 140, 220),
        (TokenKind::Preprocessor, false) => Color32::from_rgb(130, 60, 150),
        (TokenKind::Literal, true) => Color32::from_rgb(220, 170, 110),
        (TokenKind::Literal, false) => Color32::from_rgb(160, 90, 20),
        (TokenKind::Number, true) => Color32::from_rgb(180, 210, 140),
        (TokenKind::Number, false) => Color32::from_rgb(40, 120, 100),
        (TokenKind::Keyword, true) => Color32::from_rgb(100, 160, 240),
        (TokenKind::Keyword, false) => Color32::from_rgb(20, 80, 190),
        (TokenKind::Type, true) => Color32::from_rgb(90, 200, 200),
        (TokenKind::Type, false) => Color32::from_rgb(0, 120, 130),
        (TokenKind::Builtin, true) => Color32::from_rgb(230, 200, 100),
        (TokenKind::Builtin, false) => Color32::from_rgb(150, 110, 0),
        (TokenKind::Plain, true) => Color32::from_gray(215),
        (TokenKind::Plain, false) => Color32::from_gray(30),
    }
}

/// The highlighted layout of `source`; lines (1-based) in `marked` get their colour as a
/// background (errors red, warnings amber).
pub fn highlight(
    source: &str,
    font: FontId,
    dark: bool,
    marked: &BTreeMap<usize, Color32>,
) -> LayoutJob {
    let mut job = LayoutJob::default();
    let mut line = 1;
    for (kind, text) in tokenize(source) {
        let background = marked.get(&line).copied().unwrap_or(Color32::TRANSPARENT);
        job.append(
            text,
            0.0,
            TextFormat {
                font_id: font.clone(),
                color: color(kind, dark),
                background,
                ..Default::default()
            },
        );
        line += text.matches('\n').count();
    }
    job
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_source_and_know_their_kinds() {
        let source = "#define HEATLAB_BLOCK_X 32 // tile\n\
                      __global__ void k(const float* in) { /* a\nb */ int i = 42; \"s\"; }\n";
        let tokens = tokenize(source);
        let joined: String = tokens.iter().map(|(_, t)| *t).collect();
        assert_eq!(joined, source);
        let kind_of = |text: &str| tokens.iter().find(|(_, t)| *t == text).map(|(k, _)| *k);
        assert_eq!(
            kind_of("#define HEATLAB_BLOCK_X 32 "),
            Some(TokenKind::Preprocessor)
        );
        assert_eq!(kind_of("// tile\n"), Some(TokenKind::Comment));
        assert_eq!(kind_of("__global__"), Some(TokenKind::Keyword));
        assert_eq!(kind_of("float"), Some(TokenKind::Type));
        assert_eq!(kind_of("42"), Some(TokenKind::Number));
        assert_eq!(kind_of("\"s\""), Some(TokenKind::Literal));
        assert_eq!(kind_of("/* a\n"), Some(TokenKind::Comment));
        assert_eq!(kind_of("b */"), Some(TokenKind::Comment));
        assert!(tokens.iter().all(|(_, t)| !t[..t.len() - 1].contains('\n')));
    }

    #[test]
    fn marked_lines_get_a_background() {
        let marked = BTreeMap::from([(2, Color32::RED)]);
        let job = highlight(
            "int a;\nint b;\nint c;\n",
            FontId::monospace(12.0),
            true,
            &marked,
        );
        // Sections of one format may be merged: check each byte's line against its colour.
        for section in &job.sections {
            let (start, end) = (section.byte_range.start.0, section.byte_range.end.0);
            let first_line = 1 + job.text[..start].matches('\n').count();
            let text = &job.text[start..end];
            let last_line = first_line + text.trim_end_matches('\n').matches('\n').count();
            let red = section.format.background == Color32::RED;
            assert_eq!(red, first_line == 2, "{text:?}");
            assert_eq!(red, last_line == 2, "{text:?}");
        }
    }
}
