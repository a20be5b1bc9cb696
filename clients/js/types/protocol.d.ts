/** The protocol version this library speaks. */
export const PROTOCOL_VERSION: "2.3";
/** WebSocket close codes the server uses, by name. */
export const CLOSE: Readonly<{
    GOING_AWAY: 1001;
    INVALID_DATA: 1007;
    POLICY_VIOLATION: 1008;
    MESSAGE_TOO_BIG: 1009;
    KEEPALIVE_TIMEOUT: 1011;
    SERVICE_RESTART: 1012;
    TRY_AGAIN_LATER: 1013;
    SESSION_REPLACED: 4001;
}>;
/** Every error code: what it means and whether the server then closes. */
export const ERRORS: Readonly<{
    bad_message: {
        closes: boolean;
        meaning: string;
    };
    unknown_type: {
        closes: boolean;
        meaning: string;
    };
    unsupported_version: {
        closes: boolean;
        meaning: string;
    };
    hello_required: {
        closes: boolean;
        meaning: string;
    };
    session_not_found: {
        closes: boolean;
        meaning: string;
    };
    invalid_name: {
        closes: boolean;
        meaning: string;
    };
    name_taken: {
        closes: boolean;
        meaning: string;
    };
    not_in_room: {
        closes: boolean;
        meaning: string;
    };
    already_in_room: {
        closes: boolean;
        meaning: string;
    };
    room_not_found: {
        closes: boolean;
        meaning: string;
    };
    room_elsewhere: {
        closes: boolean;
        meaning: string;
    };
    room_full: {
        closes: boolean;
        meaning: string;
    };
    too_many_rooms: {
        closes: boolean;
        meaning: string;
    };
    invalid_setting: {
        closes: boolean;
        meaning: string;
    };
    not_seated: {
        closes: boolean;
        meaning: string;
    };
    seat_taken: {
        closes: boolean;
        meaning: string;
    };
    not_in_hand: {
        closes: boolean;
        meaning: string;
    };
    no_hand_in_progress: {
        closes: boolean;
        meaning: string;
    };
    not_your_turn: {
        closes: boolean;
        meaning: string;
    };
    illegal_action: {
        closes: boolean;
        meaning: string;
    };
    illegal_amount: {
        closes: boolean;
        meaning: string;
    };
    insufficient_chips: {
        closes: boolean;
        meaning: string;
    };
    rate_limited: {
        closes: boolean;
        meaning: string;
    };
    message_too_large: {
        closes: boolean;
        meaning: string;
    };
    internal_error: {
        closes: boolean;
        meaning: string;
    };
    not_room_creator: {
        closes: boolean;
        meaning: string;
    };
    not_a_bot: {
        closes: boolean;
        meaning: string;
    };
    no_player_seated: {
        closes: boolean;
        meaning: string;
    };
    too_many_bots: {
        closes: boolean;
        meaning: string;
    };
    auth_required: {
        closes: boolean;
        meaning: string;
    };
    auth_invalid: {
        closes: boolean;
        meaning: string;
    };
    auth_expired: {
        closes: boolean;
        meaning: string;
    };
    auth_wrong_audience: {
        closes: boolean;
        meaning: string;
    };
    auth_wrong_issuer: {
        closes: boolean;
        meaning: string;
    };
    auth_unknown_key: {
        closes: boolean;
        meaning: string;
    };
    auth_replayed: {
        closes: boolean;
        meaning: string;
    };
    auth_unavailable: {
        closes: boolean;
        meaning: string;
    };
    banned: {
        closes: boolean;
        meaning: string;
    };
    not_moderator: {
        closes: boolean;
        meaning: string;
    };
    cannot_moderate: {
        closes: boolean;
        meaning: string;
    };
    player_not_found: {
        closes: boolean;
        meaning: string;
    };
    kicked: {
        closes: boolean;
        meaning: string;
    };
    muted: {
        closes: boolean;
        meaning: string;
    };
    chat_refused: {
        closes: boolean;
        meaning: string;
    };
    message_not_found: {
        closes: boolean;
        meaning: string;
    };
    moderation_limited: {
        closes: boolean;
        meaning: string;
    };
    no_account: {
        closes: boolean;
        meaning: string;
    };
    server_draining: {
        closes: boolean;
        meaning: string;
    };
    invite_required: {
        closes: boolean;
        meaning: string;
    };
}>;
/** Every client message type. */
export const CLIENT_TYPES: readonly string[];
/** Every server message type. */
export const SERVER_TYPES: readonly string[];
/** Server messages that answer a request, echoing its id. */
export const DIRECT_REPLIES: readonly string[];
/** Server messages that are room events (room and seq). */
export const ROOM_EVENTS: readonly string[];
/** Server messages addressed to one connection, without seq. */
export const PERSONAL_NOTICES: readonly string[];
