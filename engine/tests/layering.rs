//! The rooms of ARCHITECTURE.md as a test: the "may use" column of its table "The rooms" is
//! read from the document, every path of the engine's sources that reaches the crate root
//! (`crate::x`, grouped and multi-line `use crate::{x::.., y::..}`, `super::` chains that climb
//! to the root) is read from the sources, and an import that the table does not allow fails
//! with its file, line and edge.
//!
//! A room may use the rooms its row names, what those may use in turn, and itself; a row names
//! only rows above it. A row may name a file or folder inside a room (`export/video.rs`): its
//! files keep to that row instead. Names the crate root re-exports (`crate::Result`) count as
//! their room's.
//!
//! The document and the sources are embedded when the test is built (`include_str!`, and
//! `build.rs` for the sources), so it passes or fails the same from any directory, on a machine
//! without the source tree. The app crate's own rule (the engine never names egui, eframe or
//! winit; the real guarantee is that the engine's manifest does not depend on them) is checked
//! beside it.

use std::collections::{BTreeMap, BTreeSet};

mod engine {
    include!(concat!(env!("OUT_DIR"), "/engine_sources.rs"));
}

const ARCHITECTURE: &str = include_str!("../../ARCHITECTURE.md");
const MANIFEST: &str = include_str!("../Cargo.toml");

#[test]
fn every_import_keeps_to_the_rooms_table() {
    let (breaks, checked) = layering_breaks(ARCHITECTURE, engine::SOURCES);
    assert!(
        breaks.is_empty(),
        "imports against the rooms table of ARCHITECTURE.md:\n{}",
        breaks.join("\n")
    );
    // The sources really were read: the engine crosses rooms hundreds of times.
    assert!(
        engine::SOURCES.len() > 20 && checked > 100,
        "{checked} paths checked"
    );
}

#[test]
fn the_engine_never_names_egui() {
    const GUI: [&str; 3] = ["egui", "eframe", "winit"];
    let gui = |word: &str| GUI.iter().any(|name| word.starts_with(name));
    let mut found = Vec::new();
    for (file, source) in engine::SOURCES {
        for lexed in tokens(source) {
            if let Token::Ident(name) = lexed.token {
                if gui(name) {
                    found.push(format!("engine/src/{file}:{}: `{name}`", lexed.line));
                }
            }
        }
    }
    for (index, line) in MANIFEST.lines().enumerate() {
        let code = line.split('#').next().unwrap_or_default();
        if GUI.iter().any(|name| code.contains(name)) {
            found.push(format!("engine/Cargo.toml:{}: {line}", index + 1));
        }
    }
    assert!(
        found.is_empty(),
        "the engine names the GUI:\n{}",
        found.join("\n")
    );
}

/// A row of the rooms table: a room (a top-level module, or a file or folder inside one) and
/// every top-level room it may use, directly or through the rooms it names.
#[derive(Debug)]
struct Room {
    path: Vec<String>,
    allowed: BTreeSet<String>,
}

/// The imports of `sources` (paths under `src/` and their text) that the rooms table of
/// `markdown` does not allow, or the table's own faults; and how many crossings were checked.
fn layering_breaks(markdown: &str, sources: &[(&str, &str)]) -> (Vec<String>, usize) {
    let rooms = match read_rooms(markdown) {
        Ok(rooms) => rooms,
        Err(fault) => return (vec![fault], 0),
    };
    let modules: BTreeSet<String> = sources
        .iter()
        .filter(|(file, _)| *file != "lib.rs")
        .filter_map(|(file, _)| module_path(file).into_iter().next())
        .collect();
    let reexports = sources
        .iter()
        .find(|(file, _)| *file == "lib.rs")
        .map(|(_, lib)| reexports(lib, &modules))
        .unwrap_or_default();
    let mut breaks = Vec::new();
    let mut checked = 0;
    for (file, source) in sources.iter().filter(|(file, _)| *file != "lib.rs") {
        let module = module_path(file);
        let own = module[0].as_str();
        let Some(room) = rooms
            .iter()
            .filter(|room| module.starts_with(&room.path))
            .max_by_key(|room| room.path.len())
        else {
            breaks.push(format!(
                "engine/src/{file}: `{own}` has no row in the rooms table"
            ));
            continue;
        };
        for (name, line) in root_names(&tokens(source), &module) {
            let target = if modules.contains(&name) {
                name.as_str()
            } else if let Some(target) = reexports.get(&name) {
                target.as_str()
            } else {
                breaks.push(format!(
                    "engine/src/{file}:{line}: `crate::{name}` is neither a room nor a \
                     re-export of lib.rs"
                ));
                continue;
            };
            checked += 1;
            if target != own && !room.allowed.contains(target) {
                let allowed: Vec<&str> = room.allowed.iter().map(String::as_str).collect();
                breaks.push(format!(
                    "engine/src/{file}:{line}: {own} -> {target}: `{}` may use only [{}]",
                    room.path.join("/"),
                    allowed.join(", ")
                ));
            }
        }
    }
    (breaks, checked)
}

/// The rows of the table under "## The rooms", in order, each with what it may use closed
/// over the rows it names; a fault where a row names no row above it.
fn read_rooms(markdown: &str) -> Result<Vec<Room>, String> {
    let mut lines = markdown
        .lines()
        .enumerate()
        .skip_while(|(_, line)| line.trim() != "## The rooms");
    if lines.next().is_none() {
        return Err("ARCHITECTURE.md has no section \"## The rooms\"".into());
    }
    let table = lines
        .skip_while(|(_, line)| !line.starts_with('|'))
        .take_while(|(_, line)| line.starts_with('|'))
        .skip(2); // the header and its rule
    let mut closed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut rooms = Vec::new();
    for (index, line) in table {
        let at = format!("ARCHITECTURE.md:{}", index + 1);
        let cells: Vec<&str> = line.split('|').collect();
        let [_, names, _, may_use, _] = cells.as_slice() else {
            return Err(format!("{at}: a row of the rooms table has three cells"));
        };
        let used = match may_use.trim() {
            "nothing" => Vec::new(),
            "everything above" => closed.keys().cloned().collect(),
            text => backticked(&without_parentheses(text)),
        };
        let mut allowed = BTreeSet::new();
        for name in used {
            let Some(theirs) = closed.get(&name) else {
                return Err(format!(
                    "{at}: `{name}` may be used only by rows below its own"
                ));
            };
            allowed.extend(theirs.iter().cloned());
            allowed.insert(name);
        }
        for name in backticked(names) {
            let path: Vec<String> = name
                .trim_end_matches('/')
                .trim_end_matches(".rs")
                .split('/')
                .map(String::from)
                .collect();
            if let [top] = path.as_slice() {
                if closed.insert(top.clone(), allowed.clone()).is_some() {
                    return Err(format!("{at}: a second row for `{top}`"));
                }
            }
            rooms.push(Room {
                path,
                allowed: allowed.clone(),
            });
        }
    }
    if rooms.is_empty() {
        return Err("ARCHITECTURE.md's rooms table has no rows".into());
    }
    Ok(rooms)
}

/// The names between backticks in `text`.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// `text` without what stands in parentheses (remarks such as "(its PNG writer)").
fn without_parentheses(text: &str) -> String {
    let mut depth = 0usize;
    text.chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

/// The module a file under `src/` holds: `grid/mod.rs` and `grid.rs` are `grid`,
/// `export/video.rs` is `export::video`.
fn module_path(file: &str) -> Vec<String> {
    let mut path: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if path.len() > 1 && path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

/// The names `lib.rs` re-exports from the rooms (`pub use error::{HeatlabError, Result}`),
/// each with its room.
fn reexports(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let tokens = tokens(lib);
    let mut found = BTreeMap::new();
    for (at, window) in tokens.windows(3).enumerate() {
        if let [use_, room, colons] = window {
            if let (Token::Ident("use"), Token::Ident(room), Token::Colons) =
                (use_.token, room.token, colons.token)
            {
                if modules.contains(room) {
                    for (name, _) in segments(&tokens, at + 3) {
                        found.insert(name, room.to_string());
                    }
                }
            }
        }
    }
    found
}

/// The names that `tokens` (of the module `module`) reach at the crate root, with their lines:
/// `crate::x`, each group's first names in `crate::{x::a, y}`, and `super::x` where the chain
/// of `super` climbs to the root (inline `mod name { .. }` blocks counted).
fn root_names(tokens: &[Lexed<'_>], module: &[String]) -> Vec<(String, usize)> {
    let token = |at: usize| tokens.get(at).map(|lexed| lexed.token);
    let mut names = Vec::new();
    let mut inline = Vec::new(); // the brace depth of each inline module the scan is in
    let mut depth = 0usize;
    for (at, lexed) in tokens.iter().enumerate() {
        let before = |back: usize| at.checked_sub(back).and_then(token);
        match lexed.token {
            Token::Punct(b'{') => {
                depth += 1;
                if let (Some(Token::Ident(_)), Some(Token::Ident("mod"))) = (before(1), before(2)) {
                    inline.push(depth);
                }
            }
            Token::Punct(b'}') => {
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Token::Ident("crate") if token(at + 1) == Some(Token::Colons) => {
                names.extend(segments(tokens, at + 2));
            }
            Token::Ident("super") if before(1) != Some(Token::Colons) => {
                let mut next = at;
                while token(next) == Some(Token::Ident("super"))
                    && token(next + 1) == Some(Token::Colons)
                {
                    next += 2;
                }
                if (next - at) / 2 == module.len() + inline.len() {
                    names.extend(segments(tokens, next));
                }
            }
            _ => {}
        }
    }
    names.retain(|(name, _)| name != "self");
    names
}

/// The first name of the path at `at`, or of each item of the group `{ .. }` there.
fn segments(tokens: &[Lexed<'_>], at: usize) -> Vec<(String, usize)> {
    let Some(first) = tokens.get(at) else {
        return Vec::new();
    };
    match first.token {
        Token::Ident(name) => vec![(name.to_string(), first.line)],
        Token::Punct(b'*') => vec![("*".to_string(), first.line)],
        Token::Punct(b'{') => {
            let mut names = Vec::new();
            let mut depth = 0usize;
            let mut item_starts = true;
            for lexed in &tokens[at..] {
                match lexed.token {
                    Token::Punct(b'{') => depth += 1,
                    Token::Punct(b'}') if depth == 1 => break,
                    Token::Punct(b'}') => depth -= 1,
                    Token::Punct(b',') if depth == 1 => item_starts = true,
                    Token::Ident(name) if depth == 1 && item_starts => {
                        names.push((name.to_string(), lexed.line));
                        item_starts = false;
                    }
                    Token::Punct(b'*') if depth == 1 && item_starts => {
                        names.push(("*".to_string(), lexed.line));
                        item_starts = false;
                    }
                    _ if depth == 1 => item_starts = false,
                    _ => {}
                }
            }
            names
        }
        Token::Colons | Token::Punct(_) => Vec::new(),
    }
}

/// A token of Rust code: what paths are made of; everything else is one punctuation byte.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Token<'a> {
    Ident(&'a str),
    Colons,
    Punct(u8),
}

#[derive(Debug)]
struct Lexed<'a> {
    token: Token<'a>,
    line: usize,
}

/// The tokens of `source` with their lines, without comments, strings and character literals
/// (so that `crate::x` in a doc comment or a message is no import).
fn tokens(source: &str) -> Vec<Lexed<'_>> {
    let bytes = source.as_bytes();
    let byte = |at: usize| bytes.get(at).copied().unwrap_or(0);
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut found = Vec::new();
    let mut line = 1;
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let token = match (byte(at), byte(at + 1)) {
            (b'/', b'/') => {
                at = source[at..].find('\n').map_or(bytes.len(), |end| at + end);
                continue;
            }
            (b'/', b'*') => {
                at = skip_block_comment(bytes, at);
                None
            }
            (b'"', _) => {
                at = skip_string(bytes, at + 1);
                None
            }
            (b'\'', b'\\') => {
                // An escape ('\n', '\'', '\u{e9}'): the closing quote comes after its first byte.
                let rest = source.get(at + 3..).unwrap_or_default();
                at = rest.find('\'').map_or(bytes.len(), |end| at + 4 + end);
                None
            }
            (b'\'', _) => {
                // A character literal ('x', 'é') or a lifetime ('a, 'static).
                let width = source[at + 1..].chars().next().map_or(1, char::len_utf8);
                at += if byte(at + 1 + width) == b'\'' {
                    2 + width
                } else {
                    1
                };
                None
            }
            (b':', b':') => {
                at += 2;
                Some(Token::Colons)
            }
            (c, _) if ident(c) => {
                while at < bytes.len() && ident(bytes[at]) {
                    at += 1;
                }
                let word = &source[start..at];
                if matches!(word, "r" | "br" | "cr") && matches!(byte(at), b'"' | b'#') {
                    at = skip_raw(bytes, at);
                    None
                } else {
                    Some(Token::Ident(word))
                }
            }
            (c, _) => {
                at += 1;
                (c.is_ascii_punctuation()).then_some(Token::Punct(c))
            }
        };
        if let Some(token) = token {
            found.push(Lexed { token, line });
        }
        line += bytes[start..at.min(bytes.len())]
            .iter()
            .filter(|&&c| c == b'\n')
            .count();
    }
    found
}

/// Past the end of the (nested) block comment that starts at `at`.
fn skip_block_comment(bytes: &[u8], mut at: usize) -> usize {
    let mut depth = 0usize;
    while at < bytes.len() {
        match (bytes[at], bytes.get(at + 1).copied()) {
            (b'/', Some(b'*')) => {
                depth += 1;
                at += 2;
            }
            (b'*', Some(b'/')) => {
                depth -= 1;
                at += 2;
                if depth == 0 {
                    return at;
                }
            }
            _ => at += 1,
        }
    }
    at
}

/// Past the closing quote of a string whose text starts at `at`.
fn skip_string(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    at
}

/// Past the end of a raw string (`r#"…"#`) or raw identifier (`r#type`) whose hashes start at
/// `at`.
fn skip_raw(bytes: &[u8], at: usize) -> usize {
    let hashes = bytes[at..].iter().take_while(|&&c| c == b'#').count();
    if bytes.get(at + hashes) != Some(&b'"') {
        return at + hashes; // a raw identifier: its name follows as a word
    }
    let mut end = at + hashes + 1;
    while end < bytes.len() {
        if bytes[end] == b'"' && bytes[end + 1..].iter().take(hashes).all(|&c| c == b'#') {
            return (end + 1 + hashes).min(bytes.len());
        }
        end += 1;
    }
    end
}

/// A small engine: an import planted in `grid` and one through `super::super` fail, comments,
/// strings and characters do not, and an allowed grouped import passes.
#[test]
fn planted_imports_are_named_with_file_line_and_edge() {
    let table = "## The rooms\n\n| room | holds | may use |\n|---|---|---|\n\
                 | `error` | errors | nothing |\n| `grid/` | grids | `error` (its `Result`) |\n\
                 | `session/` | the engine | everything above |\n";
    let grid = "use crate::{error::Result,\n    session::Thing};\n\
                // crate::session in a comment\n\
                const TEXT: &str = \"crate::session\"; const RAW: &str = r#\"crate::session\"#;\n\
                fn brace<'a>(c: char) -> bool { c == '{' }\n\
                mod tests {\n    use super::super::session::Thing;\n    use super::Grid;\n}\n\
                fn result() -> crate::Result<()> { Ok(()) }\n";
    let sources = [
        (
            "lib.rs",
            "pub mod error; pub mod grid; pub mod session;\npub use error::Result;\n",
        ),
        (
            "error.rs",
            "pub type Result<T> = std::result::Result<T, ()>;\n",
        ),
        ("grid/mod.rs", grid),
        (
            "session/mod.rs",
            "mod inner {\n    use super::super::grid::Grid;\n}\n",
        ),
    ];
    let (breaks, checked) = layering_breaks(table, &sources);
    assert_eq!(
        breaks,
        [
            "engine/src/grid/mod.rs:2: grid -> session: `grid` may use only [error]",
            "engine/src/grid/mod.rs:7: grid -> session: `grid` may use only [error]",
        ]
    );
    assert_eq!(checked, 5);
}

#[test]
fn a_row_that_names_a_row_below_it_is_a_fault() {
    let table = "## The rooms\n\n| room | holds | may use |\n|---|---|---|\n\
                 | `grid/` | grids | `error` |\n| `error` | errors | nothing |\n";
    let (breaks, _) = layering_breaks(table, &[("grid/mod.rs", "")]);
    assert_eq!(
        breaks,
        ["ARCHITECTURE.md:5: `error` may be used only by rows below its own"]
    );
}
