use super::*;

fn tempdir(tag: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("hal-known-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// Models over `was`, keeping stamps however fresh (a test cannot wait out [`SETTLE`]).
fn models(was: Doc) -> Models {
    Models {
        settle: Duration::ZERO,
        ..Models::from(was)
    }
}

fn model_of(m: &Models, dir: &Path) -> Model {
    m.doc().modules[dir].model.clone().unwrap()
}

#[test]
fn a_model_is_trusted_until_a_file_it_was_read_from_changes_even_at_the_same_mtime() {
    let dir = tempdir("same");
    let file = dir.join("compose.yaml");
    std::fs::write(&file, "services: {a: {image: x}}\n").unwrap();
    let first = models(Doc::empty());
    let read = first.inputs(&dir).unwrap();
    assert_eq!(read.compose_files, std::slice::from_ref(&file));
    let kept = model_of(&first, &dir);
    assert!(kept.still(&dir));
    let again = models(first.doc());
    assert_eq!(again.inputs(&dir).unwrap(), read);
    assert_eq!(model_of(&again, &dir), kept, "the kept model was used");

    // The same size, the mtime put back: only ctime tells.
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, "services: {b: {image: x}}\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert!(!kept.still(&dir));
    let after = models(again.doc());
    let read = after.inputs(&dir).unwrap();
    assert!(read.outside.services.contains_key("b"), "{read:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_listing_is_read_again_when_the_directory_changes() {
    let dir = tempdir("listing");
    std::fs::write(dir.join("docker-compose.yml"), "services: {}\n").unwrap();
    let first = models(Doc::empty());
    assert_eq!(first.listing(&dir).unwrap(), ["docker-compose.yml"]);
    std::fs::write(dir.join("compose.override.yaml"), "services: {}\n").unwrap();
    let again = models(first.doc());
    assert_eq!(
        again.listing(&dir).unwrap(),
        ["compose.override.yaml", "docker-compose.yml"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cache_of_another_user_version_or_schema_is_not_ours() {
    assert!(Doc::empty().is_ours());
    for other in [
        Doc {
            uid: Doc::empty().uid.wrapping_add(1),
            ..Doc::empty()
        },
        Doc {
            schema: SCHEMA + 1,
            ..Doc::empty()
        },
        Doc {
            hal: "0.0.0-other".into(),
            ..Doc::empty()
        },
    ] {
        assert!(!other.is_ours(), "{other:?}");
    }
}

#[test]
fn fresh_stamps_are_not_kept() {
    let dir = tempdir("fresh");
    std::fs::write(dir.join("compose.yaml"), "services: {}\n").unwrap();
    let m = Models::from(Doc::empty());
    m.inputs(&dir).unwrap();
    assert!(
        m.doc()
            .modules
            .get(&dir)
            .and_then(|e| e.model.as_ref())
            .is_none()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
