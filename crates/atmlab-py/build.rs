//! Captures the git commit the extension is built from, for `atmlab
//! --version` and the results' provenance: `ATMLAB_GIT_COMMIT` at compile
//! time. Read from `git` when the source is a git checkout; otherwise
//! (a build from an sdist, or without git) from the environment variable
//! `ATMLAB_GIT_COMMIT` if a packager sets it, else left unset (the version
//! then says "commit unknown"). A wheel carries the commit it was built
//! from; nothing at run time needs git.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=ATMLAB_GIT_COMMIT");
    let commit = std::env::var("ATMLAB_GIT_COMMIT").ok().filter(|c| !c.trim().is_empty()).or_else(|| {
        let commit = git(&["rev-parse", "HEAD"])?;
        // Build again when HEAD moves: HEAD itself (a checkout), the branch
        // it points to (a commit) and the packed refs.
        for path in ["HEAD", "packed-refs"] {
            if let Some(p) = git(&["rev-parse", "--git-path", path]) {
                rerun_if_exists(&p);
            }
        }
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"])
            && let Some(p) = git(&["rev-parse", "--git-path", &branch])
        {
            rerun_if_exists(&p);
        }
        Some(commit)
    });
    if let Some(commit) = commit {
        println!("cargo:rustc-env=ATMLAB_GIT_COMMIT={}", commit.trim());
    }
}

fn rerun_if_exists(path: &str) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    if p.exists() {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}
