//! The one error type of `tessera-aes`: a peer that cheated or misbehaved apart from files
//! that cannot be used and from the caller's own mistakes, and the one mapping from an error to
//! what the peers are told (its kind, [`tessera_core::Failure`], through [`tessera_net::Abort`]).

/// A check that caught a peer; its name is what every honest party reports.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Cheat {
    /// An opened vector is not a codeword: some party added an error to its share.
    #[error("opening {opening}: the opened vector is not a codeword (codeword check)")]
    NotCodeword {
        /// The opening's number in this run.
        opening: usize,
    },
    /// A looked-up table entry (Protocol 3) whose pairwise MAC is wrong.
    #[error("party {party}: a table entry's MAC is wrong (pairwise MAC check)")]
    TableMac {
        /// The party that sent it.
        party: usize,
    },
    /// The batched MAC check of the openings failed.
    #[error("the MAC check of {what} failed")]
    MacCheck {
        /// Which openings: the intermediate ones or the output.
        what: &'static str,
    },
    /// A party's revealed value does not match its commitment.
    #[error("party {party}: the revealed value does not match its commitment (commitment check)")]
    Commitment {
        /// The party.
        party: usize,
    },
    /// A party saw different opened values than this one (a broadcast was inconsistent).
    #[error("party {party} saw other opened values than this party (transcript check)")]
    Transcript {
        /// The party.
        party: usize,
    },
}

/// A pre-processing file or buffer that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrepError {
    /// Reading or writing failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// Not a tessera oblivious-AES pre-processing file, or a version this build cannot read.
    #[error("{path}: not a tessera oblivious-AES pre-processing file ({what})")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        what: String,
    },
    /// Shorter than its header says.
    #[error("{path}: truncated: {got} bytes, the header announces {want}")]
    Truncated {
        /// The file.
        path: String,
        /// Its length.
        got: u64,
        /// The length the header announces.
        want: u64,
    },
    /// The digest at the end does not match the contents, or the file is longer than announced.
    #[error("{path}: corrupt: {what}")]
    Corrupt {
        /// The file.
        path: String,
        /// What does not match.
        what: String,
    },
    /// The file belongs to another party.
    #[error("{path}: this file is party {file}'s pre-processing, not party {run}'s")]
    OtherParty {
        /// The file.
        path: String,
        /// The party the file was made for.
        file: usize,
        /// The party this run is.
        run: usize,
    },
    /// The file was consumed by an earlier run.
    #[error(
        "{path}: already used by an earlier run (marker {marker}); pre-processing is used once"
    )]
    Reused {
        /// The file.
        path: String,
        /// The marker file that says so.
        marker: String,
    },
    /// A peer's pre-processing comes from another dealing.
    #[error("party {party} loaded pre-processing of another session or shape")]
    OtherSession {
        /// The peer.
        party: usize,
    },
    /// A peer's file is another party's.
    #[error("party {party} loaded the pre-processing of party {claims}")]
    PeerHasOtherParty {
        /// The peer.
        party: usize,
        /// The party its file was made for.
        claims: usize,
    },
    /// The run needs more material than the file holds.
    #[error("the pre-processing is exhausted: {what}")]
    Exhausted {
        /// What ran out.
        what: String,
    },
}

/// Everything `tessera-aes` can report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A peer cheated and a check caught it.
    #[error("cheating detected: {0}")]
    Cheat(#[from] Cheat),
    /// Pre-processing that cannot be used.
    #[error(transparent)]
    Prep(#[from] PrepError),
    /// From the network (a peer that stopped, a malformed message, a timeout).
    #[error(transparent)]
    Net(#[from] tessera_net::Error),
    /// The caller's own mistake.
    #[error("{0}")]
    Usage(String),
    /// The operating system's randomness.
    #[error(transparent)]
    Core(#[from] tessera_core::Error),
}

impl tessera_core::Failure for Error {
    fn fault(&self) -> tessera_core::Fault {
        use tessera_core::Fault;
        match self {
            Error::Net(e) => e.fault(),
            Error::Cheat(_) => Fault::CheatDetected,
            Error::Prep(_) => Fault::Preprocessing,
            Error::Usage(_) => Fault::Misuse,
            Error::Core(e) => e.fault(),
        }
    }
}
