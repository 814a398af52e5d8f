//! What travels between parties: frames of a 7-byte header (the sending protocol instance's
//! [`Space`], the message's [`Kind`] id, the payload length) and a payload; the reserved abort
//! message; [`Frame`], an aligned buffer a payload is received into; and [`escape`], which makes
//! text from a peer safe to print.

use crate::Error;
use tessera_core::Block;

/// A kind of message within a protocol: its one-byte id on the wire and a name for error
/// messages. Protocols declare their kinds as constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// The byte on the wire.
    pub id: u8,
    /// A name for error messages.
    pub name: &'static str,
}

impl Kind {
    /// A message kind.
    pub const fn new(id: u8, name: &'static str) -> Self {
        Kind { id, name }
    }
}

/// The namespace of one protocol instance on a link: every frame carries its sender's space,
/// so messages of two protocols (or two instances of one) cannot be taken for each other.
/// Space 0 is the network's own (abort and mesh hello).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Space(u16);

impl Space {
    /// The network's own space.
    pub(crate) const CONTROL: Space = Space(0);

    /// Space `n`, which must not be 0 (the network's own). A session hands spaces out with
    /// [`Spaces`]; tests and tools that run one protocol may name one.
    pub const fn new(n: u16) -> Self {
        assert!(n != 0, "space 0 is the network's own");
        Space(n)
    }

    /// The space's number.
    pub const fn get(self) -> u16 {
        self.0
    }

    /// The tag of messages of `kind` in this space.
    pub const fn tag(self, kind: Kind) -> Tag {
        Tag { space: self, kind }
    }
}

/// Hands out spaces 1, 2, ... in order; both ends of a link must allocate in the same order,
/// which running the same protocol code gives.
#[derive(Clone, Debug)]
pub struct Spaces {
    next: u32,
}

impl Default for Spaces {
    fn default() -> Self {
        Spaces { next: 1 }
    }
}

impl Spaces {
    /// The next unused space.
    pub fn allocate(&mut self) -> Result<Space, Error> {
        let n = u16::try_from(self.next).map_err(|_| {
            Error::Usage("more than 65535 protocol instances in one session".into())
        })?;
        self.next += 1;
        Ok(Space(n))
    }
}

/// A message's full tag: the protocol instance's space and the message kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    /// The protocol instance.
    pub space: Space,
    /// The message.
    pub kind: Kind,
}

/// A tag as it arrived on the wire, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawTag {
    /// The space number.
    pub space: u16,
    /// The kind id.
    pub id: u8,
}

impl std::fmt::Display for RawTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tag {:#04x} in space {}", self.id, self.space)
    }
}

impl From<Tag> for RawTag {
    fn from(t: Tag) -> Self {
        RawTag {
            space: t.space.0,
            id: t.kind.id,
        }
    }
}

/// How long an expected message may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    /// Exactly this many bytes.
    Exact(usize),
    /// At most this many bytes.
    AtMost(usize),
}

/// The message a party sends, once, to every peer when it gives up; its payload is one byte,
/// an [`crate::AbortCode`]. It lives in the network's own space.
pub const ABORT: Kind = Kind::new(0xff, "abort");

/// Frame header bytes: space (2, little-endian), kind id (1), payload length (4, LE).
pub const FRAME_HEADER: usize = 7;

pub(crate) fn header(tag: RawTag, len: u32) -> [u8; FRAME_HEADER] {
    let [s0, s1] = tag.space.to_le_bytes();
    let [l0, l1, l2, l3] = len.to_le_bytes();
    [s0, s1, tag.id, l0, l1, l2, l3]
}

pub(crate) fn parse_header(h: &[u8]) -> (RawTag, usize) {
    let tag = RawTag {
        space: u16::from_le_bytes([h[0], h[1]]),
        id: h[2],
    };
    (tag, u32::from_le_bytes([h[3], h[4], h[5], h[6]]) as usize)
}

pub(crate) const ABORT_TAG: RawTag = RawTag {
    space: 0,
    id: ABORT.id,
};

/// Text a peer sent, made safe to print: printable ASCII stays (a backslash doubled), every
/// other byte becomes `\xNN`, and at most `max` characters are kept (then `...`). A peer cannot
/// move the cursor, clear the screen or start a line of its own on the user's terminal.
pub fn escape(bytes: &[u8], max: usize) -> String {
    let mut out = String::new();
    for &b in bytes {
        let piece = match b {
            b'\\' => "\\\\".to_string(),
            0x20..=0x7e => char::from(b).to_string(),
            _ => format!("\\x{b:02x}"),
        };
        if out.len() + piece.len() > max {
            out.push_str("...");
            break;
        }
        out.push_str(&piece);
    }
    out
}

/// Text made safe to print on a terminal: printable characters (any script) stay, a backslash
/// is doubled, control characters (C0, DEL, C1) and the bidirectional overrides become
/// `\u{XX}`, and at most `max` characters are kept (then `...`). For text that may come from a
/// file or a peer (a path, a circuit's name) inside a message of ours.
pub fn escape_text(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count >= max {
            out.push_str("...");
            break;
        }
        let hidden =
            c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        match c {
            '\\' => out.push_str("\\\\"),
            c if hidden => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// A received payload in a 16-byte aligned buffer, so that a payload of blocks can be read as
/// `&[Block]` without a copy. Reused from message to message.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    storage: Vec<Block>,
    len: usize,
}

impl Frame {
    /// An empty frame.
    pub fn new() -> Self {
        Frame::default()
    }

    /// The payload.
    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.storage)[..self.len]
    }

    /// Room for a payload of `len` bytes (contents unspecified until written).
    pub(crate) fn prepare(&mut self, len: usize) -> &mut [u8] {
        self.storage.resize(len.div_ceil(16), Block::ZERO);
        self.len = len;
        &mut bytemuck::cast_slice_mut(&mut self.storage)[..len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_printable_ascii_only_and_bounds_the_length() {
        let forged = b"\x1b[2J\ntessera: result 42\r\x00\\";
        let shown = escape(forged, 100);
        assert_eq!(shown, "\\x1b[2J\\x0atessera: result 42\\x0d\\x00\\\\");
        assert!(shown.bytes().all(|b| (0x20..=0x7e).contains(&b)));
        let long = escape(&[0u8; 4096], 40);
        assert!(long.len() <= 43 && long.ends_with("..."), "{long}");
        assert_eq!(escape("é".as_bytes(), 100), "\\xc3\\xa9");
    }

    #[test]
    fn text_keeps_printable_characters_and_hides_controls() {
        let shown = escape_text("ℓ = 32 \u{1b}[2J\nx\u{202e}y\\", 100);
        assert_eq!(shown, "ℓ = 32 \\u{1b}[2J\\u{a}x\\u{202e}y\\\\");
        assert!(!shown.chars().any(char::is_control));
        assert_eq!(escape_text(&"é".repeat(10), 4), "éééé...");
    }

    #[test]
    fn headers_round_trip() {
        let tag = RawTag {
            space: 0x1234,
            id: 0x56,
        };
        let h = header(tag, 0x0708_090a);
        assert_eq!(parse_header(&h), (tag, 0x0708_090a));
    }
}
