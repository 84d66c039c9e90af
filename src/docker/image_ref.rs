//! An image reference split into the repository and tag the Engine API's pull and tag calls take: pure, no engine asked.

/// Splits `registry:5000/repo/name:tag` into repository and tag (`latest` by
/// default); a digest reference stays whole.
pub(crate) fn split_ref(image: &str) -> (String, Option<String>) {
    if image.contains('@') {
        return (image.to_string(), None);
    }
    let slash = image.rfind('/').map_or(0, |i| i + 1);
    match image[slash..].rfind(':') {
        Some(i) => (
            image[..slash + i].to_string(),
            Some(image[slash + i + 1..].to_string()),
        ),
        None => (image.to_string(), Some("latest".to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_split_at_the_tag_not_the_port() {
        assert_eq!(
            split_ref("busybox"),
            ("busybox".into(), Some("latest".into()))
        );
        assert_eq!(
            split_ref("127.0.0.1:5000/hal/fixture:v1"),
            ("127.0.0.1:5000/hal/fixture".into(), Some("v1".into()))
        );
        assert_eq!(
            split_ref("127.0.0.1:5000/hal/fixture"),
            ("127.0.0.1:5000/hal/fixture".into(), Some("latest".into()))
        );
        assert_eq!(split_ref("a/b@sha256:00").1, None);
    }
}
