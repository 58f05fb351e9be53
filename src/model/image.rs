//! Images as the harnesses write them: base64 in a field of their own (Anthropic's `source.data`, pi's `data`,
//! Gemini's `inlineData`) or inside a `data:` URL (OpenAI's `image_url`, Codex's `input_image`, opencode's file
//! parts). One decoding for every reader, as lenient as the encoders it meets are loose (line breaks every 76
//! characters, padding left off, the URL-safe alphabet), so an image reads the same whichever harness wrote it;
//! what a reader does with data that is no base64 at all (refuse the file, or keep the part as it was) stays its own.
//! Part of the data model (the store's own wire form reads its images through it too), below every reader.

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

use super::{Block, ImageData};

const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
const STANDARD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, LENIENT);
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, LENIENT);

/// The bytes base64 text holds (whitespace anywhere in it ignored; either alphabet; padding or none).
pub fn decode(data: &str) -> Result<Vec<u8>, String> {
    let compact: String;
    let data = if data.bytes().any(|b| b.is_ascii_whitespace()) {
        compact = data.split_ascii_whitespace().collect();
        compact.as_str()
    } else {
        data
    };
    STANDARD
        .decode(data)
        .or_else(|e| URL_SAFE.decode(data).map_err(|_| e))
        .map_err(|e| format!("bad base64: {e}"))
}

/// An image block of `media_type` from base64 text.
pub fn from_base64(media_type: &str, data: &str) -> Result<Block, String> {
    Ok(Block::Image {
        media_type: media_type.to_string(),
        data: ImageData::Bytes(decode(data)?),
    })
}

/// The media type and base64 text of a `data:` URL that holds base64 (`data:image/png;base64,…`, parameters
/// before `;base64` allowed); None for any other URL.
pub fn data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.trim_start().strip_prefix("data:")?;
    let (head, data) = rest.split_once(',')?;
    let head = head.strip_suffix(";base64")?;
    let media_type = head.split(';').next().unwrap_or("").trim();
    Some((
        if media_type.is_empty() {
            "application/octet-stream"
        } else {
            media_type
        },
        data,
    ))
}

/// An image block from a base64 `data:` URL; None for a URL that is none (a remote image, a file).
pub fn from_data_url(url: &str) -> Option<Result<Block, String>> {
    let (media_type, data) = data_url(url)?;
    Some(from_base64(media_type, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_reads_as_the_encoders_write_it() {
        for written in [
            "iVBORw0K",
            "iVBORw0K\n",
            "iVBO\r\nRw0K",
            "AAEC",
            "AAE",
            "AAE=",
            "-_8",
            "+/8=",
        ] {
            assert!(decode(written).is_ok(), "{written}");
        }
        assert_eq!(decode("AAE").unwrap(), decode("AAE=").unwrap());
        assert_eq!(decode("-_8").unwrap(), decode("+/8").unwrap());
        assert_eq!(decode("iVBO\r\nRw0K").unwrap(), decode("iVBORw0K").unwrap());
        assert!(decode("not base64!").is_err());
    }

    #[test]
    fn data_urls_name_their_media_type_and_hold_the_bytes() {
        assert_eq!(
            data_url("data:image/png;base64,AAEC"),
            Some(("image/png", "AAEC"))
        );
        assert_eq!(
            data_url("data:image/jpeg;name=shot.jpg;base64,AAEC"),
            Some(("image/jpeg", "AAEC"))
        );
        assert_eq!(
            data_url("data:;base64,AAEC"),
            Some(("application/octet-stream", "AAEC"))
        );
        // not base64, or not a data URL: none
        assert_eq!(data_url("data:text/plain,hello"), None);
        assert_eq!(data_url("https://example.com/a.png"), None);
        assert_eq!(data_url("file:///tmp/a.png"), None);
        match from_data_url("data:image/png;base64,AAEC") {
            Some(Ok(Block::Image {
                media_type,
                data: ImageData::Bytes(b),
            })) => assert_eq!((media_type.as_str(), b), ("image/png", vec![0, 1, 2])),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            from_data_url("data:image/png;base64,%%%"),
            Some(Err(_))
        ));
    }
}
