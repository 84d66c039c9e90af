// bench/completion.sh: the floor of `hal module list` with the name check: scan the root, and per stack
// what the glance must do: open .env, read the compose file, look for 4 override names.
use std::io::Read;
fn main() {
    let root = std::env::args().nth(1).unwrap();
    let mut n = 0usize;
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let d = e.path();
        if !d.join("compose.yaml").is_file() { continue; }
        let _ = std::fs::File::open(d.join(".env"));
        let mut s = Vec::new();
        if let Ok(mut f) = std::fs::File::open(d.join("compose.yaml")) { let _ = f.read_to_end(&mut s); n += s.len(); }
        for o in ["compose.override.yaml","compose.override.yml","docker-compose.override.yaml","docker-compose.override.yml"] {
            let _ = std::fs::File::open(d.join(o));
        }
    }
    println!("{n}");
}
