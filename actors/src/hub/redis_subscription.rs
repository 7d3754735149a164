//! [`subscribe_forever`]: Redis channels kept subscribed through outages,
//! for the hub's events, task cancellations and the instances' bus alike.

use std::time::Duration;

use futures::StreamExt;

use super::redis_link::RedisLink;

/// The first wait after a failure; it doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// What happened to the subscription.
pub(crate) enum Subscription<'a> {
    /// Subscribed (again).
    Subscribed,
    /// A message on one of the channels: the channel, the payload.
    Message(&'a str, &'a [u8]),
    /// The subscription ended, or could not be made (with the error); the
    /// next attempt follows after the back-off.
    Lost(Option<redis::RedisError>),
}

/// Keeps `channels` subscribed on `link`'s Redis for ever (on the master of
/// the moment, under Sentinel), telling `on` of every message and every
/// change. After a failed attempt or a lost subscription it waits — 100 ms,
/// doubling to 5 s, back to 100 ms once subscribed — and subscribes again.
pub(crate) async fn subscribe_forever(
    link: RedisLink,
    channels: Vec<String>,
    mut on: impl FnMut(Subscription<'_>),
) -> ! {
    let mut backoff = MIN_BACKOFF;
    loop {
        let subscribed = async {
            let mut pubsub = link.client().await?.get_async_pubsub().await?;
            pubsub.subscribe(&channels).await?;
            Ok::<_, redis::RedisError>(pubsub)
        };
        match subscribed.await {
            Ok(pubsub) => {
                backoff = MIN_BACKOFF;
                on(Subscription::Subscribed);
                let mut messages = pubsub.into_on_message();
                while let Some(msg) = messages.next().await {
                    on(Subscription::Message(msg.get_channel_name(), msg.get_payload_bytes()));
                }
                on(Subscription::Lost(None));
            }
            Err(e) => on(Subscription::Lost(Some(e))),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}
