export { legal } from "./legal.js";
export { HELLO_TIMEOUT, TaliClient, TaliError } from "./client.js";
export { memoryTokenStore, storageTokenStore, defaultTokenStore } from "./tokens.js";
export { FairDiceChecker, checkHand, rollsSeen } from "./fair-hand.js";
export { SCHEME, commitment, deriveDice, effectiveEntropies, newEntropy, rollFaces, validEntropy, verify } from "./fairness.js";
export { CLIENT_TYPES, CLOSE, DIRECT_REPLIES, ERRORS, PERSONAL_NOTICES, PROTOCOL_VERSION, ROOM_EVENTS, SERVER_TYPES } from "./protocol.js";
