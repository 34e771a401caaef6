//! Failures as C sees them: a kind ([`TbsError`]) and a message, kept per thread for
//! `tbs_last_error` and `tbs_last_error_message`; and [`guarded`], which runs an exported
//! function's body so that neither an error nor a panic crosses into C.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use tbstream_root::{FenError, TableError};

/// Why the last failing call of this thread failed.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TbsError {
    /// No call of this thread has failed yet.
    None = 0,
    /// A null pointer, a handle that is not open, a turn other than 0 or 1, a buffer too
    /// small, text that is not UTF-8.
    InvalidArgument = 1,
    /// The position is malformed or illegal: overlapping bitboards, a FEN that does not
    /// parse, no or two kings, pawns on the first or last rank, the side not to move in
    /// check, an impossible en passant square, more than 6 men, castling rights.
    BadPosition = 2,
    /// `tbs_init`: the folder does not exist or holds no table.
    NoTables = 3,
    /// A table the probe needs is not in the folder.
    MissingTable = 4,
    /// A table the probe needs is damaged, truncated or unreadable (checksums, block
    /// index, decoding), or contradicts itself.
    DamagedTable = 5,
    /// A table the probe reads does not mark its cursed results (built by an older
    /// version), so the five-valued result is unknown; regenerate it.
    UnknownCategory = 6,
    /// A bug: tbstream panicked; the call was abandoned and the panic stopped at the
    /// library's boundary.
    Internal = 7,
}

/// A failure on its way to C: its kind and what to tell the user.
#[derive(Debug)]
pub struct Failure {
    pub kind: TbsError,
    pub message: String,
}

impl Failure {
    pub fn new(kind: TbsError, message: impl Into<String>) -> Failure {
        Failure { kind, message: message.into() }
    }

    /// A null or unusable argument.
    pub fn argument(message: impl Into<String>) -> Failure {
        Failure::new(TbsError::InvalidArgument, message)
    }

    /// A panic caught at the boundary, with its message when it has one.
    fn panic(payload: Box<dyn Any + Send>) -> Failure {
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        Failure::new(TbsError::Internal, format!("internal error (tbstream panicked: {text})"))
    }
}

impl From<FenError> for Failure {
    fn from(e: FenError) -> Failure {
        Failure::new(TbsError::BadPosition, e.to_string())
    }
}

impl From<TableError> for Failure {
    fn from(e: TableError) -> Failure {
        let kind = match e {
            TableError::Missing { .. }
            | TableError::MissingForSearch { .. }
            | TableError::NoTable(_)
            | TableError::BareWhite(_) => TbsError::MissingTable,
            TableError::TooManyPieces(_) => TbsError::BadPosition,
            TableError::NoFolder(_) => TbsError::NoTables,
            TableError::Panicked(_) => TbsError::Internal,
            _ => TbsError::DamagedTable,
        };
        Failure::new(kind, e.to_string())
    }
}

thread_local! {
    /// The last failure of this thread, its message NUL-terminated for C.
    static LAST: RefCell<(TbsError, CString)> = RefCell::new((TbsError::None, CString::default()));
}

/// Keeps `f` as this thread's last failure.
fn record(f: Failure) {
    // A message cannot hold a NUL for C: cut there.
    let mut bytes = f.message.into_bytes();
    bytes.truncate(bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len()));
    let text = CString::new(bytes).unwrap_or_default();
    let _ = LAST.try_with(|last| *last.borrow_mut() = (f.kind, text));
}

/// This thread's last failure kind.
pub fn last_kind() -> TbsError {
    LAST.try_with(|last| last.borrow().0).unwrap_or(TbsError::None)
}

/// This thread's last failure message, valid until this thread's next failure.
pub fn last_message() -> *const c_char {
    // The string lives in the thread-local until the next `record` on this thread.
    LAST.try_with(|last| last.borrow().1.as_ptr()).unwrap_or(c"".as_ptr())
}

/// Runs an exported function's body: its value, or `failed` after keeping the failure (an
/// error or a caught panic) as this thread's last.
#[inline(always)]
pub fn guarded<T>(failed: T, body: impl FnOnce() -> Result<T, Failure>) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(f)) => {
            record(f);
            failed
        }
        Err(payload) => {
            record(Failure::panic(payload));
            failed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> (TbsError, String) {
        // SAFETY: `last_message` gives a NUL-terminated string owned by this thread.
        (last_kind(), unsafe { CStr::from_ptr(last_message()) }.to_str().unwrap().to_string())
    }

    #[test]
    fn a_panic_becomes_the_failure_value_and_an_internal_error() {
        assert_eq!(last(), (TbsError::None, String::new()));
        assert_eq!(guarded(-1, || -> Result<i32, Failure> { panic!("boom {}", 7) }), -1);
        let (kind, message) = last();
        assert_eq!(kind, TbsError::Internal);
        assert!(message.contains("panicked: boom 7"), "{message}");
        // A success leaves the last error as it was.
        assert_eq!(guarded(-1, || Ok(5)), 5);
        assert_eq!(last().0, TbsError::Internal);
    }

    #[test]
    fn errors_keep_their_kind_and_a_message_cut_at_a_nul() {
        assert_eq!(guarded(0u8, || Err(Failure::new(TbsError::MissingTable, "KQvK.tbs\0 and more"))), 0);
        assert_eq!(last(), (TbsError::MissingTable, "KQvK.tbs".to_string()));
        let fen = tbstream_root::Position::from_fen("8/8/8/8/8/8/8/8 w").unwrap_err();
        assert_eq!(Failure::from(fen).kind, TbsError::BadPosition);
    }
}
