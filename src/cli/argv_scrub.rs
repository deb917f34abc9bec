//! Scrubbing passwords from the process's own argv, so that another user's `ps` (which reads
//! `/proc/PID/cmdline`, i.e. the argv strings in this process's memory) never shows a password
//! given in a `--target` DSN or any other argument (issue 15, item 9).
//!
//! Rust's `std::env::args` hands out copies; the original strings are only reachable through the
//! `argv` pointer the C runtime got. glibc (and musl) call every function in `.init_array` with
//! `(argc, argv, envp)`, as std itself does to capture its arguments; we register one that keeps
//! the pointer. After clap has copied what it needs, [`scrub`] overwrites each password's bytes
//! in place with `*`: lengths stay, so the kernel's view of the argument area stays consistent
//! (PostgreSQL's ps_status.c changes the same memory for its process titles).
//! Elsewhere (not Linux) this does nothing and the README's advice applies: pass passwords by
//! PGPASSWORD, a passfile or a run file.

use std::sync::atomic::{AtomicIsize, AtomicPtr, Ordering};

use crate::config::target::password_spans;

static ARGC: AtomicIsize = AtomicIsize::new(0);
static ARGV: AtomicPtr<*mut libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static CAPTURE_ARGV: extern "C" fn(libc::c_int, *mut *mut libc::c_char, *mut *mut libc::c_char) =
    capture_argv;

#[cfg(target_os = "linux")]
extern "C" fn capture_argv(
    argc: libc::c_int,
    argv: *mut *mut libc::c_char,
    _envp: *mut *mut libc::c_char,
) {
    ARGC.store(argc as isize, Ordering::Relaxed);
    ARGV.store(argv, Ordering::Relaxed);
}

/// Overwrites every password in the process's argv with `*`, in place. Returns how many
/// arguments changed. Call it once the command line has been parsed (clap keeps copies).
pub fn scrub() -> usize {
    let argc = ARGC.load(Ordering::Relaxed);
    let argv = ARGV.load(Ordering::Relaxed);
    if argv.is_null() || argc <= 0 {
        return 0;
    }
    let mut changed = 0;
    for i in 0..argc {
        // SAFETY: the C runtime guarantees argv[0..argc] are valid NUL-terminated strings that
        // live for the whole process and belong to it; we only overwrite bytes before each NUL
        // with another non-NUL byte, so every string keeps its length and terminator. No other
        // thread reads them: this runs on the main thread before any worker is started.
        unsafe {
            let arg = *argv.offset(i);
            if arg.is_null() {
                break;
            }
            let len = libc::strlen(arg);
            let bytes = std::slice::from_raw_parts_mut(arg.cast::<u8>(), len);
            if mask_in_place(bytes) {
                changed += 1;
            }
        }
    }
    changed
}

/// Replaces the bytes of every password span in `arg` by `*`. Non-UTF-8 arguments are read
/// lossily: a password span found there is masked all the same.
fn mask_in_place(arg: &mut [u8]) -> bool {
    let text = String::from_utf8_lossy(arg);
    if text.len() != arg.len() {
        // Lossy decoding changed the offsets; mask the whole argument rather than guess.
        let has = !password_spans(&text).is_empty();
        if has {
            arg.fill(b'*');
        }
        return has;
    }
    let spans = password_spans(&text);
    for s in &spans {
        arg[s.clone()].fill(b'*');
    }
    !spans.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_only_the_password_bytes() {
        let mut a = b"--target=postgresql://bob:hunter2@h/db".to_vec();
        assert!(mask_in_place(&mut a));
        assert_eq!(a, b"--target=postgresql://bob:*******@h/db");
        let mut b = b"host=h password=hunter2 user=u".to_vec();
        assert!(mask_in_place(&mut b));
        assert_eq!(b, b"host=h password=******* user=u");
        let mut c = b"--duration".to_vec();
        assert!(!mask_in_place(&mut c));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_argv_pointer_is_captured() {
        // The test binary's own argv: captured before main, readable, its first string the
        // program as /proc/self/cmdline shows it.
        let argv = ARGV.load(Ordering::Relaxed);
        assert!(!argv.is_null() && ARGC.load(Ordering::Relaxed) >= 1);
        let cmdline = std::fs::read("/proc/self/cmdline").unwrap();
        let first = cmdline.split(|&b| b == 0).next().unwrap().to_vec();
        // SAFETY: argv[0] is a valid C string, as in `scrub`.
        let arg0 = unsafe { std::ffi::CStr::from_ptr(*argv) }
            .to_bytes()
            .to_vec();
        assert_eq!(arg0, first);
    }
}
