//! Small facts about the running process that std does not offer.
#![allow(unsafe_code)] // geteuid(2), malloc_trim(3), access(2), statvfs(3): no preconditions, or a buffer they fill.

/// Whether hal runs as root (effective uid 0).
pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The effective user id of this process.
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Hands the memory the allocator keeps free back to the system. A process
/// that lives for months (`hal watch`) calls it after a burst of work, so its
/// resident size is what it holds, not the high water of its busiest moment.
pub(crate) fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim has no preconditions; it only releases free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The user's login name for messages, from the environment or the uid.
pub(crate) fn user_name() -> String {
    for var in ["USER", "LOGNAME"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            return v.to_string_lossy().into_owned();
        }
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    format!("uid {uid}")
}

/// `$XDG_VAR/rel`, else `$HOME/home_rel/rel`, for per-user files; `None` with neither.
pub(crate) fn user_dir(xdg_var: &str, home_rel: &str, rel: &str) -> Option<std::path::PathBuf> {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    match nonempty(xdg_var) {
        Some(x) => Some(std::path::PathBuf::from(x).join(rel)),
        None => nonempty("HOME").map(|h| std::path::PathBuf::from(h).join(home_rel).join(rel)),
    }
}

/// The login name of `uid` from `/etc/passwd`, else `uid N`.
pub(crate) fn name_of_uid(uid: u32) -> String {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .find_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?;
            (f.nth(1)?.parse::<u32>().ok()? == uid).then(|| name.to_string())
        })
        .unwrap_or_else(|| format!("uid {uid}"))
}

/// `access(2)`: whether this process's user may use `path` for `mode`.
pub(crate) fn access(path: &std::ffi::CStr, mode: libc::c_int) -> bool {
    // SAFETY: `path` is a valid NUL-terminated string for the call's duration.
    unsafe { libc::access(path.as_ptr(), mode) == 0 }
}

/// What a file system has room for: the bytes an unprivileged write may
/// still use, and whether it is mounted read-only (`None`: it could not be asked).
pub(crate) fn room(path: &std::ffi::CStr) -> Option<(u64, bool)> {
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `path` is a valid NUL-terminated string and `st` a buffer of
    // the right size for the call's duration; it is read only when the call succeeded.
    let ok = unsafe { libc::statvfs(path.as_ptr(), st.as_mut_ptr()) == 0 };
    if !ok {
        return None;
    }
    // SAFETY: statvfs succeeded, so it filled the buffer (zeroed before anyway).
    let st = unsafe { st.assume_init() };
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    let free = u64::from(st.f_bavail).saturating_mul(u64::from(st.f_frsize));
    Some((free, st.f_flag & libc::ST_RDONLY != 0))
}
