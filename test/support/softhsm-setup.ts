import { setUp } from './softhsm-global';

export default setUp;
